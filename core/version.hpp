#pragma once
namespace lenlab {
// lenlab's version ("0.1.0"): CMakeLists.txt's project(lenlab VERSION ...), the one place it is
// written (CMake generates its definition). `lenlab --version`, the run, eval and stream files,
// the Python module's __version__ and the pip package (python/build_backend) all read it there.
const char* version();
}  // namespace lenlab
