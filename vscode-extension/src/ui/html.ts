/**
 * The page frame of the extension's webviews (details, resume report): a strict Content Security
 * Policy (styles from the webview only, one nonce'd script), theme colours, and buttons and links
 * that post `{ cmd, ...data }` back to the extension. Pure strings; no `vscode` import.
 */

import { escapeHtml } from '../format';

export const esc = escapeHtml;

/** Random nonce for the page's one script. */
export function nonce(random: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'.charAt(Math.floor(random() * 62));
  return s;
}

/** A button that posts `{cmd, ...data}`; `title` is its tooltip. */
export function action(cmd: string, label: string, data: Record<string, unknown> = {}, title = ''): string {
  return `<button class="act" data-cmd="${esc(cmd)}" data-args="${esc(JSON.stringify(data))}"${title ? ` title="${esc(title)}"` : ''}>${esc(label)}</button>`;
}

/** A link-styled control that posts `{cmd, ...data}`. */
export function link(cmd: string, label: string, data: Record<string, unknown> = {}, title = ''): string {
  return `<a href="#" class="act" data-cmd="${esc(cmd)}" data-args="${esc(JSON.stringify(data))}"${title ? ` title="${esc(title)}"` : ''}>${esc(label)}</a>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 20px 24px; line-height: 1.45; }
h1 { font-size: 1.5em; margin: 16px 0 4px; } h2 { font-size: 1.15em; margin: 22px 0 6px; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 3px; }
.sub { color: var(--vscode-descriptionForeground); }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: .9em; margin-right: 6px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.state-ok { background: var(--vscode-testing-iconPassed, #2e7d32); color: #fff; } .state-drift { background: var(--vscode-editorWarning-foreground, #b58900); color: #000; } .state-blocked { background: var(--vscode-editorError-foreground, #c62828); color: #fff; }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: 3px 8px 3px 0; vertical-align: top; } th { color: var(--vscode-descriptionForeground); font-weight: normal; }
tr.entry:hover { background: var(--vscode-list-hoverBackground); } td.seq { color: var(--vscode-descriptionForeground); white-space: nowrap; width: 1%; }
.stale { color: var(--vscode-editorWarning-foreground); } .err { color: var(--vscode-errorForeground); }
button.act { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); border: none; padding: 2px 9px; margin: 0 4px 2px 0; border-radius: 2px; cursor: pointer; font-size: .92em; }
button.act:hover { background: var(--vscode-button-secondaryHoverBackground); } button.primary { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
a.act, a.act:visited { color: var(--vscode-textLink-foreground); text-decoration: none; } a.act:hover { text-decoration: underline; }
ul { margin: 4px 0; padding-left: 20px; } code { font-family: var(--vscode-editor-font-family); }
`;

/** The whole HTML document of a webview. */
export function page(opts: { title: string; cspSource: string; nonce: string; body: string }): string {
  const csp = `default-src 'none'; style-src ${opts.cspSource} 'unsafe-inline'; img-src ${opts.cspSource}; script-src 'nonce-${opts.nonce}';`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><title>${esc(opts.title)}</title><style>${STYLE}</style></head>
<body>${opts.body}
<script nonce="${opts.nonce}">
const vscode = acquireVsCodeApi();
document.addEventListener('click', (e) => {
  const el = e.target.closest('.act');
  if (!el) return;
  e.preventDefault();
  vscode.postMessage({ cmd: el.dataset.cmd, ...JSON.parse(el.dataset.args || '{}') });
});
</script></body></html>`;
}

/** A message from a page, checked: `{cmd: string, ...}` or undefined for anything else. */
export function pageMessage(raw: unknown): ({ cmd: string } & Record<string, unknown>) | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const cmd = (raw as { cmd?: unknown }).cmd;
  return typeof cmd === 'string' ? (raw as { cmd: string } & Record<string, unknown>) : undefined;
}
