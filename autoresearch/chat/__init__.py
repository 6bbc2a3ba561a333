"""Chat steering: attach to a running or paused campaign, ask questions, change it.

    session = ChatSession("digits-mlp", author="alice")
    conversation = Conversation(session, provider=None)      # slash commands only
    conversation.handle("/space lr=1e-4..1e-2")              # -> ["queued #3 search_space.lr: ..."]
"""

from autoresearch.chat.conversation import MAX_TOOL_ROUNDS, Conversation
from autoresearch.chat.model import chat_provider
from autoresearch.chat.session import ChatError, ChatSession
from autoresearch.chat.slash import HELP, SlashError, parse, parse_value
from autoresearch.chat.tools import Reply, chat_registry

__all__ = [
    "HELP",
    "MAX_TOOL_ROUNDS",
    "ChatError",
    "ChatSession",
    "Conversation",
    "Reply",
    "SlashError",
    "chat_provider",
    "chat_registry",
    "parse",
    "parse_value",
]
