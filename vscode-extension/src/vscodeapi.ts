/**
 * The seam to the editor: every `vscode` call the extension makes goes through here (plus
 * vscode-languageclient in server.ts), so the logic modules stay importable in plain Node tests.
 * Values cross the seam as plain data (ItemModel, button ids, paths); vscode objects stay here.
 */

import * as vscode from 'vscode';

export type Disposable = vscode.Disposable;
export type ExtensionContext = vscode.ExtensionContext;
export type LogOutputChannel = vscode.LogOutputChannel;

export function createLogOutputChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}

export function createStatusBarItem(id: string, priority: number): vscode.StatusBarItem {
  const item = vscode.window.createStatusBarItem(id, vscode.StatusBarAlignment.Left, priority);
  item.name = 'Session Keeper: agent sessions';
  return item;
}

export function warningBackground(): vscode.ThemeColor {
  return new vscode.ThemeColor('statusBarItem.warningBackground');
}

interface PlainButton { iconId: string; tooltip: string }
interface PlainItem<B extends PlainButton> { label: string; description?: string; detail?: string; alwaysShow?: boolean; buttons?: B[] }

/**
 * A QuickPick over plain items whose buttons are `{ iconId, tooltip, ... }`: items and buttons
 * are mapped to vscode ones on the way in and back to the plain ones in events.
 */
export function createPlainQuickPick<B extends PlainButton, T extends PlainItem<B>>(): {
  items: readonly T[]; busy: boolean; title: string | undefined; placeholder: string | undefined;
  matchOnDescription: boolean; matchOnDetail: boolean; keepScrollPosition?: boolean; readonly selectedItems: readonly T[];
  onDidAccept(cb: () => void): vscode.Disposable; onDidHide(cb: () => void): vscode.Disposable;
  onDidTriggerItemButton(cb: (e: { item: T; button: B }) => void): vscode.Disposable;
  show(): void; hide(): void; dispose(): void;
} {
  type Mapped = vscode.QuickPickItem & { plain: T; plainButtons: Map<vscode.QuickInputButton, B> };
  const qp = vscode.window.createQuickPick<Mapped>();
  let plain: readonly T[] = [];
  return {
    get items() { return plain; },
    set items(items: readonly T[]) {
      plain = items;
      qp.items = items.map((it) => {
        const buttons = new Map<vscode.QuickInputButton, B>();
        for (const b of it.buttons ?? []) buttons.set({ iconPath: new vscode.ThemeIcon(b.iconId), tooltip: b.tooltip }, b);
        return { label: it.label, description: it.description, detail: it.detail, alwaysShow: it.alwaysShow, buttons: [...buttons.keys()], plain: it, plainButtons: buttons };
      });
    },
    get busy() { return qp.busy; }, set busy(v) { qp.busy = v; },
    get title() { return qp.title; }, set title(v) { qp.title = v; },
    get placeholder() { return qp.placeholder; }, set placeholder(v) { qp.placeholder = v; },
    get matchOnDescription() { return qp.matchOnDescription; }, set matchOnDescription(v) { qp.matchOnDescription = v; },
    get matchOnDetail() { return qp.matchOnDetail; }, set matchOnDetail(v) { qp.matchOnDetail = v; },
    get keepScrollPosition() { return qp.keepScrollPosition; }, set keepScrollPosition(v) { qp.keepScrollPosition = v; },
    get selectedItems() { return qp.selectedItems.map((i) => i.plain); },
    onDidAccept: (cb) => qp.onDidAccept(cb),
    onDidHide: (cb) => qp.onDidHide(cb),
    onDidTriggerItemButton: (cb) => qp.onDidTriggerItemButton((e) => {
      const button = e.item.plainButtons.get(e.button);
      if (button) cb({ item: e.item.plain, button });
    }),
    show: () => qp.show(), hide: () => qp.hide(), dispose: () => qp.dispose(),
  };
}

export function showQuickPick<T extends vscode.QuickPickItem>(items: T[], options: vscode.QuickPickOptions): Thenable<T | undefined> {
  return vscode.window.showQuickPick(items, options);
}

export function showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined> {
  return vscode.window.showInputBox(options);
}

/** A modal dialog (Cancel is added by the editor, last); the first label is the default (Enter). */
export function showModal(severity: 'warning' | 'error' | 'info', message: string, detail: string, labels: string[]): Thenable<string | undefined> {
  const opts: vscode.MessageOptions = { modal: true, detail };
  if (severity === 'error') return vscode.window.showErrorMessage(message, opts, ...labels);
  if (severity === 'warning') return vscode.window.showWarningMessage(message, opts, ...labels);
  return vscode.window.showInformationMessage(message, opts, ...labels);
}

/** A non-modal notification with buttons. */
export function showMessage(severity: 'warning' | 'error' | 'info', message: string, labels: string[] = []): Thenable<string | undefined> {
  if (severity === 'error') return vscode.window.showErrorMessage(message, ...labels);
  if (severity === 'warning') return vscode.window.showWarningMessage(message, ...labels);
  return vscode.window.showInformationMessage(message, ...labels);
}

/** A cancellable notification: `report` moves it by `increment` percent, `onCancel` hears Cancel. */
export function withCancellableProgress<R>(title: string, task: (report: (message: string, increment: number) => void, onCancel: (listener: () => void) => void) => Promise<R>): Thenable<R> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (p, token) =>
    task((message, increment) => p.report({ message, increment }), (listener) => { token.onCancellationRequested(listener); }),
  );
}

export function registerCommand(id: string, fn: (...args: unknown[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(id, fn);
}

export function executeCommand<T>(id: string, ...args: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(id, ...args);
}

/** Sets a `when`-clause context key. */
export function setContext(key: string, value: unknown): Thenable<unknown> {
  return vscode.commands.executeCommand('setContext', key, value);
}

export function getConfiguration(section: string): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(section);
}

/** Writes one setting of `section` in the user (global) settings. */
export function updateGlobalSetting(section: string, key: string, value: unknown): Thenable<void> {
  return vscode.workspace.getConfiguration(section).update(key, value, vscode.ConfigurationTarget.Global);
}

export function onDidChangeConfiguration(fn: (affects: (section: string) => boolean) => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => fn((s) => e.affectsConfiguration(s)));
}

/** Path of the first workspace folder (the workspace the threads belong to). */
export function firstWorkspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

export function onDidChangeWorkspaceFolders(fn: () => void): vscode.Disposable {
  return vscode.workspace.onDidChangeWorkspaceFolders(() => fn());
}

/** Registers a read-only virtual document provider for `scheme`; returns a refresher. */
export function registerDocumentProvider(
  scheme: string,
  provide: (path: string) => Promise<string>,
): { disposable: vscode.Disposable; refresh(path: string): void } {
  const emitter = new vscode.EventEmitter<vscode.Uri>();
  const provider: vscode.TextDocumentContentProvider = {
    onDidChange: emitter.event,
    provideTextDocumentContent: (uri) => provide(uri.path),
  };
  const reg = vscode.workspace.registerTextDocumentContentProvider(scheme, provider);
  return {
    disposable: vscode.Disposable.from(reg, emitter),
    refresh: (path) => emitter.fire(vscode.Uri.from({ scheme, path })),
  };
}

/** A `scheme:path` URI as a string (what diff editors and trees are given). */
export function virtualUri(scheme: string, path: string): string {
  return vscode.Uri.from({ scheme, path }).toString();
}

/** Opens VS Code's diff editor on two URIs (strings from virtualUri or fileUri). */
export async function openDiff(left: string, right: string, title: string): Promise<void> {
  await vscode.commands.executeCommand('vscode.diff', vscode.Uri.parse(left), vscode.Uri.parse(right), title, { preview: true });
}

/** Opens the multi-file diff editor: [label URI, left, right] per file. */
export async function openChanges(title: string, files: [string, string, string][]): Promise<void> {
  const parsed = files.map(([r, l, n]) => [vscode.Uri.parse(r), vscode.Uri.parse(l), vscode.Uri.parse(n)]);
  await vscode.commands.executeCommand('vscode.changes', title, parsed);
}

export function fileUri(path: string): string {
  return vscode.Uri.file(path).toString();
}

/** Opens JSON in a new untitled editor (the user may save it: that is the export). */
export async function openUntitledJson(content: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'json', content });
  await vscode.window.showTextDocument(doc);
}

export async function openFile(path: string): Promise<void> {
  await vscode.window.showTextDocument(vscode.Uri.file(path), { preview: true });
}

/** Opens a folder in a new window (another worktree). */
export async function openFolderInNewWindow(path: string): Promise<void> {
  await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(path), { forceNewWindow: true });
}

export function writeClipboard(text: string): Thenable<void> {
  return vscode.env.clipboard.writeText(text);
}

export function getExtension(id: string): vscode.Extension<unknown> | undefined {
  return vscode.extensions.getExtension(id);
}

export function userHome(): string | undefined {
  return process.env.HOME ?? process.env.USERPROFILE;
}

// ---- terminals ------------------------------------------------------------------------------------

export interface TerminalSpec {
  name: string;
  cwd: string;
  /** A shell command line typed into the terminal's shell (it stays open afterwards). */
  text?: string;
  /** Or: run this program as the terminal's process; `onExit` gets its exit code. */
  program?: { command: string; args: string[] };
  onExit?: (code: number | undefined) => void;
}

/** Opens an integrated terminal in `cwd` and runs the spec's command in it. */
export function runInTerminal(spec: TerminalSpec): vscode.Disposable {
  const terminal = vscode.window.createTerminal({
    name: spec.name,
    cwd: spec.cwd,
    ...(spec.program ? { shellPath: spec.program.command, shellArgs: spec.program.args } : {}),
  });
  terminal.show();
  if (spec.text) terminal.sendText(spec.text, true);
  const sub = vscode.window.onDidCloseTerminal((t) => {
    if (t !== terminal) return;
    sub.dispose();
    spec.onExit?.(t.exitStatus?.code);
  });
  return sub;
}

// ---- the Sessions tree ------------------------------------------------------------------------------

/** Everything a tree row shows, as plain data (built by ui/sessionsTree.ts). */
export interface ItemModel {
  id?: string;
  label: string;
  description?: string;
  /** Markdown. */
  tooltip?: string;
  /** A file under the extension's media/ folder (an agent icon), or a codicon id. */
  icon?: { media: string } | { codicon: string; color?: string };
  contextValue?: string;
  collapsible?: 'none' | 'collapsed' | 'expanded';
  command?: { command: string; title: string; arguments?: unknown[] };
  /** `sessionkeeper-thread:` URI for decorations (current / state badge). */
  resourceUri?: string;
}

export interface TreeSource<N> {
  roots(): Promise<N[]> | N[];
  children(node: N): Promise<N[]> | N[];
  item(node: N): ItemModel;
}

/** Registers a tree view fed by `source`; returns it with a `refresh(node?)`. */
export function createTreeView<N>(viewId: string, source: TreeSource<N>, media: (file: string) => vscode.Uri): {
  view: vscode.TreeView<N>; refresh(node?: N): void; disposable: vscode.Disposable;
} {
  const emitter = new vscode.EventEmitter<N | undefined>();
  const provider: vscode.TreeDataProvider<N> = {
    onDidChangeTreeData: emitter.event,
    getChildren: (node) => (node === undefined ? source.roots() : source.children(node)),
    getTreeItem: (node) => toTreeItem(source.item(node), media),
  };
  const view = vscode.window.createTreeView(viewId, { treeDataProvider: provider, showCollapseAll: true });
  return { view, refresh: (node) => emitter.fire(node), disposable: vscode.Disposable.from(view, emitter) };
}

function toTreeItem(m: ItemModel, media: (file: string) => vscode.Uri): vscode.TreeItem {
  const state = m.collapsible === 'expanded' ? vscode.TreeItemCollapsibleState.Expanded
    : m.collapsible === 'collapsed' ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None;
  const item = new vscode.TreeItem(m.label, state);
  if (m.id) item.id = m.id;
  if (m.description !== undefined) item.description = m.description;
  if (m.tooltip) item.tooltip = new vscode.MarkdownString(m.tooltip, true);
  if (m.contextValue) item.contextValue = m.contextValue;
  if (m.command) item.command = m.command;
  if (m.resourceUri) item.resourceUri = vscode.Uri.parse(m.resourceUri);
  if (m.icon && 'media' in m.icon) item.iconPath = media(m.icon.media);
  else if (m.icon) item.iconPath = new vscode.ThemeIcon(m.icon.codicon, m.icon.color ? new vscode.ThemeColor(m.icon.color) : undefined);
  return item;
}

/** Badges and colours for `scheme:` rows, from a plain function of the URI string. */
export function registerDecorations(
  scheme: string,
  decorate: (uri: string) => { badge?: string; tooltip?: string; color?: string } | undefined,
): { disposable: vscode.Disposable; refresh(): void } {
  const emitter = new vscode.EventEmitter<undefined>();
  const reg = vscode.window.registerFileDecorationProvider({
    onDidChangeFileDecorations: emitter.event,
    provideFileDecoration: (uri) => {
      if (uri.scheme !== scheme) return undefined;
      const d = decorate(uri.toString());
      return d ? new vscode.FileDecoration(d.badge, d.tooltip, d.color ? new vscode.ThemeColor(d.color) : undefined) : undefined;
    },
  });
  return { disposable: vscode.Disposable.from(reg, emitter), refresh: () => emitter.fire(undefined) };
}

// ---- webviews ---------------------------------------------------------------------------------------

export interface Panel {
  setHtml(html: string): void;
  setTitle(title: string): void;
  reveal(): void;
  /** Content-Security-Policy source of the webview (for the rendered page). */
  cspSource: string;
  onMessage(fn: (message: unknown) => void): void;
  onDispose(fn: () => void): void;
}

/** A webview panel with scripts enabled (the page talks back with postMessage). */
export function createPanel(viewType: string, title: string): Panel {
  const panel = vscode.window.createWebviewPanel(viewType, title, { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
    { enableScripts: true, retainContextWhenHidden: false, enableFindWidget: true });
  return {
    setHtml: (html) => { panel.webview.html = html; },
    setTitle: (t) => { panel.title = t; },
    reveal: () => panel.reveal(),
    cspSource: panel.webview.cspSource,
    onMessage: (fn) => { panel.webview.onDidReceiveMessage(fn); },
    onDispose: (fn) => { panel.onDidDispose(fn); },
  };
}

/** A file under the extension's media/ folder. */
export function mediaUri(context: vscode.ExtensionContext, file: string): vscode.Uri {
  return vscode.Uri.joinPath(context.extensionUri, 'media', file);
}
