// Session Keeper inside OpenClaw's own turns (plugin hooks; no network; fails open).
//
// before_prompt_build: `sessionkeeper --check-resume <sessionId> --workspace <workspaceDir>
// --agents openclaw --json` (OPENCLAW_STATE_DIR passed on); on drift the differences are prepended
// to the model's context. before_agent_run: a verdict of blocked because the workspace holds
// another repository (or none) stops the run with a message to the user. Anything else — no
// sessionkeeper, a timeout, an unknown thread (a session's first turn), output that is not JSON —
// lets the turn go on unchecked: the plugin never breaks OpenClaw.
import { spawnSync } from "node:child_process";

const STOPPING = new Set(["other_repository", "cwd_missing"]); // blocking, and no relocation fixes them here
const checked = new Map(); // sessionId -> the report of this turn's check (read by before_agent_run)

function check(ctx, config) {
  const sessionId = ctx?.sessionId;
  const workspace = ctx?.workspaceDir;
  if (typeof sessionId !== "string" || typeof workspace !== "string") return null;
  const command = Array.isArray(config?.command) && config.command.length ? config.command : ["sessionkeeper"];
  try {
    const done = spawnSync(command[0], [...command.slice(1), "--check-resume", sessionId, "--workspace",
      workspace, "--agents", "openclaw", "--json"], {
      encoding: "utf8", timeout: Number(config?.timeoutMs) || 8000, env: process.env,
      stdio: ["ignore", "pipe", "pipe"], maxBuffer: 16 << 20,
    });
    if (done.error || ![0, 10, 11].includes(done.status)) return null;
    const report = JSON.parse(done.stdout);
    return report && typeof report.verdict === "string" ? report : null;
  } catch {
    return null;
  }
}

function describe(difference) {
  const shown = (v) => (v === null || v === undefined ? "none" : typeof v === "string" ? v : JSON.stringify(v));
  return `- ${difference.kind}: recorded ${shown(difference.recorded)}, now ${shown(difference.current)}` +
    (difference.detail ? ` (${difference.detail})` : "");
}

export default {
  id: "sessionkeeper",
  name: "Session Keeper",
  description: "Checks a session against its workspace before each turn.",
  register(api) {
    const config = api.pluginConfig ?? {};
    api.on("before_prompt_build", (_event, ctx) => {
      const report = check(ctx, config);
      if (ctx?.sessionId) checked.set(ctx.sessionId, report);
      if (!report || report.verdict !== "drift" || !Array.isArray(report.differences)) return undefined;
      return {
        prependContext: "Session Keeper: the workspace changed since this session last ran " +
          "(reconstructed from OpenClaw's transcript and the workspace when Session Keeper first saw it):\n" +
          report.differences.map(describe).join("\n"),
      };
    });
    api.on("before_agent_run", (_event, ctx) => {
      try {
        const report = ctx?.sessionId && checked.has(ctx.sessionId) ? checked.get(ctx.sessionId) : check(ctx, config);
        if (ctx?.sessionId) checked.delete(ctx.sessionId);
        const stopping = (report?.differences ?? []).filter((d) => STOPPING.has(d?.kind));
        if (report?.verdict !== "blocked" || !stopping.length) return { outcome: "pass" };
        return {
          outcome: "block", reason: "sessionkeeper: blocked",
          message: "Session Keeper stopped this resume: this session belongs to another repository than " +
            `${ctx.workspaceDir}.\n${stopping.map(describe).join("\n")}\n` +
            "Check it with `sessionkeeper --check-resume " + ctx.sessionId + "`.",
        };
      } catch {
        return { outcome: "pass" };
      }
    });
  },
};
