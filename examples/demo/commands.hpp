// The behaviour of each fisk-demo command. Declarations live in the command table
// (demo.cpp); these are the actions it points at.
#pragma once

#include "minifisk.hpp"

namespace demo {

int stream_info(const minifisk::Context& ctx);
int stream_rm(const minifisk::Context& ctx);
int pub(const minifisk::Context& ctx);
int debug_dump(const minifisk::Context& ctx);
int reset(const minifisk::Context& ctx);
int sleep(const minifisk::Context& ctx);
int flood(const minifisk::Context& ctx);
int fail(const minifisk::Context& ctx);
int spawn(const minifisk::Context& ctx);
int echo(const minifisk::Context& ctx);
int env(const minifisk::Context& ctx);
int config_get(const minifisk::Context& ctx);
int config_set(const minifisk::Context& ctx);

}  // namespace demo
