"""One chat turn through Hermes Agent's own gateway session code, as its gateway runs one.

Run by the Python of Hermes's virtualenv (never ours), with HERMES_HOME set:
    python hermes_chat_turn.py '{"platform": "telegram", "chat_id": "...", "chat_type": "dm",
                                 "user_id": "...", "text": "..."}'
It does what `gateway/run.py` does for an inbound message, minus the platform's network adapter
(no Telegram can be reached here): `SessionStore.get_or_create_session(SessionSource)` — which
applies the reset policy and ends a reset session with its reason — then an `AIAgent` with the
gateway's runtime, that session id and the source's fields, `run_conversation` on the stored
transcript. Prints one JSON line: the session id and key, and whether the store reset the chat.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    """Run one turn; print {"session_id", "session_key", "was_auto_reset", "reset_reason", "reply"}."""
    args = json.loads(sys.argv[1])
    from gateway.config import Platform, load_gateway_config
    from gateway.run import _resolve_gateway_model, _resolve_runtime_agent_kwargs
    from gateway.session import SessionSource, SessionStore
    from run_agent import AIAgent

    config = load_gateway_config()
    store = SessionStore(config.sessions_dir, config)
    source = SessionSource(platform=Platform(args["platform"]), chat_id=args["chat_id"],
                           chat_type=args.get("chat_type", "dm"), user_id=args.get("user_id"),
                           user_name=args.get("user_name"), chat_name=args.get("chat_name"))
    entry = store.get_or_create_session(source)
    runtime = _resolve_runtime_agent_kwargs()
    model = runtime.pop("model", None) or _resolve_gateway_model()
    agent = AIAgent(model=model, **runtime, quiet_mode=True, verbose_logging=False,
                    session_id=entry.session_id, platform=source.platform.value,
                    user_id=source.user_id, chat_id=source.chat_id, chat_type=source.chat_type,
                    chat_name=source.chat_name, gateway_session_key=entry.session_key,
                    session_db=store._db, max_iterations=8)
    history = store.load_transcript(entry.session_id)
    result = agent.run_conversation(args["text"], conversation_history=history,
                                    task_id=entry.session_id)
    store.update_session(entry.session_key)
    print(json.dumps({"session_id": entry.session_id, "session_key": entry.session_key,
                      "was_auto_reset": entry.was_auto_reset,
                      "reset_reason": entry.auto_reset_reason,
                      "reply": (result or {}).get("final_response")}), flush=True)


if __name__ == "__main__":
    main()
