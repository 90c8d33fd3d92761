#include "postbox/barrier/version.hpp"

namespace postbox {
const char* version() noexcept { return "0.1.0"; }
}  // namespace postbox
