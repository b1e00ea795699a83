// Bundles the extension (dist/extension.js) or, with --tests, the unit tests (out-test/*.test.js).
// --production minifies and drops source maps (what the .vsix ships).
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const production = args.has('--production');

if (args.has('--tests')) {
  const dir = join(root, 'test', 'unit');
  const entries = readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => join(dir, f));
  rmSync(join(root, 'out-test'), { recursive: true, force: true });
  await build({
    entryPoints: entries, outdir: join(root, 'out-test'), bundle: true, platform: 'node', format: 'cjs',
    target: 'node20', sourcemap: 'inline', logLevel: 'warning',
    // The unit-tested modules must not import 'vscode': leaving it external makes any such
    // import fail at require time, so the tests guard the seam. The language client stays
    // external too, so server.test.ts can answer it with a fake (test/unit/fakeLanguageClient.ts).
    external: ['vscode', 'vscode-languageclient', 'vscode-languageclient/node'],
  });
} else {
  await build({
    entryPoints: [join(root, 'src', 'extension.ts')], outfile: join(root, 'dist', 'extension.js'),
    bundle: true, platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'],
    sourcemap: !production, minify: production, logLevel: 'warning',
  });
}
