#pragma once

namespace postbox {
// The library version, "MAJOR.MINOR.PATCH".
const char* version() noexcept;
}  // namespace postbox
