"""Chat steering: attach to a running or paused campaign, ask questions, change it.

    session = ChatSession("digits-mlp", author="alice")
    conversation = Conversation(session, provider=None)      # slash commands only
    conversation.handle("/space lr=1e-4..1e-2")              # -> ["queued #3 search_space.lr: ..."]
"""

from autoresearch.chat.conversation import MAX_TOOL_ROUNDS, Conversation
from autoresearch.chat.model import chat_provider
from autoresearch.chat.session import ChatError, ChatSession
from autoresearch.chat.slash import HELP, SlashError, parse, parse_value, read_text_values
from autoresearch.chat.steering_skills import steering_registry
from autoresearch.chat.tools import ChatContext, Reply, chat_context, chat_registry

__all__ = [
    "HELP",
    "MAX_TOOL_ROUNDS",
    "ChatContext",
    "ChatError",
    "ChatSession",
    "Conversation",
    "Reply",
    "SlashError",
    "chat_context",
    "chat_provider",
    "chat_registry",
    "parse",
    "parse_value",
    "read_text_values",
    "steering_registry",
]
