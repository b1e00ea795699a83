// The real `sessionkeeper serve` (E2E_SERVER=real) against a store seeded by scripts/e2e.sh with
// the real CLI in a scratch git repo (E2E_SEED, a JSON file):
//   "Clean thread"   recorded on main, which is checked out: todos 1/3, tests 7/9 -> resumes ok;
//   "Drifted thread" recorded on fix/payment (one commit ahead), then `git checkout main` -> drift.
// and agent homes seeded by the REAL Codex CLI and Claude Code (seed.codex, seed.claude), which the
// server reads only through the sessionKeeper.codexHome / claudeHome settings:
//   a Codex session on main with Session Keeper's hooks (baseline exact) -> resumes ok;
//   a Claude Code session on fix/payment, no hooks (baseline from its log) -> drift.
// Runs inside run.mjs, which provides the page, the check() recorder and the helpers. Every step
// is a counted check; nothing is skipped (a missing seed is a failed check). The checks live in
// real/, one module per part of the story, in the order they run; real/helpers.mjs has what they
// share.
import { existsSync } from 'node:fs';
import { agentChecks } from './real/agents.mjs';
import { contentChecks } from './real/content.mjs';
import { editorChecks } from './real/editor.mjs';
import { helpers } from './real/helpers.mjs';
import { listingChecks } from './real/listing.mjs';
import { resumeChecks } from './real/resume.mjs';

/** The checks, part after part: each leaves the editor as the next one expects it. */
export async function realScenario(t) {
  const { check } = t;
  const h = helpers(t);
  const { seed, seedFile, clean, drifted, codex, claude, storeThreads } = h;
  await check('the store was seeded with a clean and a drifted thread here, and one elsewhere (real CLI); the agent homes with a real Codex and a real Claude Code session', async () => {
    if (!seed) throw new Error(`E2E_SEED missing or unreadable (${seedFile}): scripts/e2e.sh must seed the real store`);
    const ids = storeThreads().map((x) => x.thread_id);
    if (ids.length !== 2 || !ids.includes(clean.thread_id) || !ids.includes(drifted.thread_id)) throw new Error(`store: ${ids}`);
    const agents = storeThreads('--agent', 'codex').concat(storeThreads('--agent', 'claude')).map((x) => [x.thread_id, x.agent, x.baseline]);
    const want = [[codex.thread_id, 'codex', 'hook'], [claude.thread_id, 'claude', 'log']];
    if (JSON.stringify(agents) !== JSON.stringify(want)) throw new Error(`agent threads: ${JSON.stringify(agents)}, want ${JSON.stringify(want)}`);
    for (const a of [codex, claude]) if (!existsSync(a.transcript)) throw new Error(`no transcript ${a.transcript}`);
  });
  if (!seed) return;

  await listingChecks(t, h);
  await agentChecks(t, h);
  const forkId = await resumeChecks(t, h);
  await contentChecks(t, h, forkId);
  await editorChecks(t, h);
}
