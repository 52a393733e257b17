#pragma once
// fisk-ai's agent-to-agent protocol, version 1: everything at once. Each header can also be
// included on its own.

#include <fiskai/a2a/blocks.hpp>
#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/error.hpp>
#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/memory_transport.hpp>
#include <fiskai/a2a/messages.hpp>
#include <fiskai/a2a/protocol.hpp>
#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/transport.hpp>
#include <fiskai/a2a/types.hpp>
#include <fiskai/a2a/validator.hpp>
