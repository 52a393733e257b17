#include <fiskai/a2a/protocol.hpp>

#include <fiskai/gocompat/name.hpp>

#include <algorithm>

namespace fiskai::a2a {

bool is_valid_identity(std::string_view name) noexcept { return gocompat::is_valid_name(name, max_identity_length); }

bool is_valid_request_id(std::string_view id) noexcept { return gocompat::is_valid_name(id, max_request_id_length); }

bool is_known_protocol(std::string_view id) noexcept {
    return std::find(protocols::all.begin(), protocols::all.end(), id) != protocols::all.end();
}

}  // namespace fiskai::a2a
