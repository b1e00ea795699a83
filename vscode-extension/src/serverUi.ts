/**
 * What the user can do when the server cannot start (first run), and the walkthrough's actions:
 * one notification with the cause and its buttons — Install into the selected interpreter (pip in
 * a terminal; the server restarts when it succeeds), Select Interpreter, Open Settings — and
 * Connect agents (`sessionkeeper hooks install` in a terminal).
 */

import { installCommand, problemNotice, type Problem } from './firstRun';
import { shellQuote } from './format';
import type { Logger } from './errors';
import type { Launch } from './settings';
import { SECTION } from './settings';
import * as api from './vscodeapi';

export interface ServerUiDeps {
  log: Logger & { show(preserveFocus?: boolean): void };
  restart(): Promise<void>;
  launch(): Promise<Launch>;
  installSpec(): string;
}

export class ServerUi {
  private problem: Problem | undefined;
  private shown: string | undefined;

  constructor(private readonly deps: ServerUiDeps) {}

  /** Remembers (or forgets) why the server cannot start. */
  setProblem(problem: Problem | undefined): void {
    this.problem = problem;
    if (!problem) this.shown = undefined;
  }

  get current(): Problem | undefined {
    return this.problem;
  }

  /** The one notification for the current problem (`after`: what led to it). Shown once per cause unless asked. */
  async notify(after?: string, force = false): Promise<void> {
    const problem = this.problem;
    if (!problem || (!force && this.shown === problem.message)) return;
    this.shown = problem.message;
    const notice = problemNotice(problem, after);
    this.deps.log.info(`First run: ${notice.message}`);
    const pick = await api.showMessage('error', notice.message, notice.buttons.map((b) => b.label));
    const action = notice.buttons.find((b) => b.label === pick)?.action;
    this.deps.log.info(`First run: chose ${action ?? 'nothing'}`);
    if (action === 'install') await this.install();
    else if (action === 'select') await this.selectInterpreter();
    else if (action === 'settings') await api.executeCommand('workbench.action.openSettings', `${SECTION}.pythonPath`);
    else if (action === 'log') this.deps.log.show();
  }

  /** pip install into the interpreter the server runs with; restarts the server when pip succeeds. */
  async install(): Promise<void> {
    const launch = await this.deps.launch();
    const python = this.problem?.python ?? launch.command;
    const cmd = installCommand(python, this.deps.installSpec());
    this.deps.log.info(`Installing: ${[cmd.command, ...cmd.args].join(' ')}`);
    api.runInTerminal({
      name: 'Session Keeper: install', cwd: api.firstWorkspaceFolder() ?? api.userHome() ?? '/',
      program: cmd,
      onExit: (code) => {
        this.deps.log.info(`Install finished with exit code ${code ?? 'unknown'}`);
        if (code === 0) void this.deps.restart().catch(() => this.notify(`after installing into ${python}`, true));
        else void api.showMessage('error', `Session Keeper: pip exited with ${code ?? 'an unknown code'}; see the terminal.`);
      },
    });
  }

  /** The Python extension's interpreter picker when it is installed, else a path typed in. */
  async selectInterpreter(): Promise<void> {
    if (api.getExtension('ms-python.python')) {
      await api.executeCommand('python.setInterpreter');
      await api.updateGlobalSetting(SECTION, 'pythonPath', '');
      return;
    }
    const path = await api.showInputBox({
      title: 'Session Keeper: Python interpreter', prompt: 'The python that has (or will get) the sessionkeeper package',
      placeHolder: '/path/to/venv/bin/python', ignoreFocusOut: true,
    });
    if (!path) return;
    this.deps.log.info(`Interpreter set to ${path}`);
    await api.updateGlobalSetting(SECTION, 'pythonPath', path.trim());
    await api.updateGlobalSetting(SECTION, 'serverCommand', []);
  }

  /** `sessionkeeper hooks install` in a terminal: Codex and Claude Code then report to Session Keeper. */
  async connectAgents(): Promise<void> {
    const launch = await this.deps.launch();
    // The terminal does not get the server's environment: name its store, or the hooks record
    // into the default store, which this server (SESSIONKEEPER_HOME from storePath) never reads.
    const store = launch.env.SESSIONKEEPER_HOME;
    const argv = [launch.command, ...launch.args.slice(0, launch.args.indexOf('serve') >= 0 ? launch.args.indexOf('serve') : launch.args.length), 'hooks', 'install',
      ...(store ? ['--store', store] : [])];
    this.deps.log.info(`Connect agents: ${argv.join(' ')}`);
    api.runInTerminal({ name: 'Session Keeper: connect agents', cwd: api.firstWorkspaceFolder() ?? api.userHome() ?? '/', text: argv.map(shellQuote).join(' ') });
  }
}
