/**
 * The seam to the editor: every `vscode` call the extension makes goes through here (plus
 * vscode-languageclient in server.ts), so the logic modules stay importable in plain Node tests.
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
  item.name = 'Session Keeper';
  return item;
}

export function warningBackground(): vscode.ThemeColor {
  return new vscode.ThemeColor('statusBarItem.warningBackground');
}

export function createQuickPick<T extends vscode.QuickPickItem>(): vscode.QuickPick<T> {
  return vscode.window.createQuickPick<T>();
}

export function showQuickPick<T extends vscode.QuickPickItem>(items: T[], options: vscode.QuickPickOptions): Thenable<T | undefined> {
  return vscode.window.showQuickPick(items, options);
}

export function showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined> {
  return vscode.window.showInputBox(options);
}

/** A modal dialog (Cancel is added by the editor); resolves to the chosen label. */
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

export function withProgress<R>(title: string, task: (report: (message: string) => void) => Promise<R>): Thenable<R> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, (p) =>
    task((message) => p.report({ message })),
  );
}

export function registerCommand(id: string, fn: (...args: unknown[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(id, fn);
}

export function executeCommand<T>(id: string, ...args: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(id, ...args);
}

export function getConfiguration(section: string): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(section);
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

/** Opens a document of a registered virtual scheme as Markdown, read-only. */
export async function openVirtualDocument(scheme: string, path: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme, path }));
  await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
  await vscode.window.showTextDocument(doc, { preview: true });
}

/** Opens JSON in a new untitled editor (the user may save it: that is the export). */
export async function openUntitledJson(content: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'json', content });
  await vscode.window.showTextDocument(doc);
}

export async function openFile(path: string): Promise<void> {
  await vscode.window.showTextDocument(vscode.Uri.file(path), { preview: true });
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
