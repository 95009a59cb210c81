#pragma once
namespace lenlab {
// The git commit the binary was built from ("<sha>[-dirty]", or "unknown" outside a checkout).
const char* git_revision();
}  // namespace lenlab
