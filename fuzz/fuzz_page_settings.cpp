// libFuzzer target: the body of `lenlab serve`'s POST /api/runs, handled as the server handles it
// (lab/serve/server.cpp) up to the point where a run would be queued: parse_page_request (a
// UsageError: the 400 with its message), then check_page_settings with the
// budget `lenlab serve` passes by default (--max-time 10m, --max-memory: the memory available) on a
// CPU machine, then the reply's body as the server builds it ({"errors": [{field, message}...]})
// and dumps it to text.
//
// The expected answers are a parse error's reply, a list of field errors, or a spec. Anything else
// is a finding: a crash, a sanitizer report, an exception escaping (libFuzzer reports it as a
// deadly signal; in the server, httplib turns it into a bare 500), a hang, unbounded memory, or a
// broken promise, checked here: every error has a message and names a field of the request (or
// none); a request with no error gives a spec that resolve() takes.
//
// Work cap (fuzz/page_request_cap.hpp; it skips work, never an input): a request whose checks
// would evaluate f at too many targets is not checked. Nothing is trained (the queue is never
// reached).
//
// Also replayed over fuzz/corpus/page_settings/ by the normal test suite (fuzz/replay_main.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cost/budget.hpp"
#include "fuzz/page_request_cap.hpp"
#include "lab/serve/page_settings.hpp"
#include "train/run_settings.hpp"

namespace {

using Json = nlohmann::ordered_json;

// Reports a broken promise and aborts, which libFuzzer records as a crash with this input.
[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_page_settings: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  Json request;
  try {
    request = lenlab::parse_page_request(body);
  } catch (const lenlab::UsageError& e) {
    (void)lenlab::errors_json({{"", e.what()}}).dump();  // strict: the message must be UTF-8
    return 0;
  }
  if (!lenlab::fuzz::page_request_within_cap(request)) return 0;
  lenlab::Budget budget;  // as `lenlab serve` sets it by default (lab/cli/serve_command.cpp)
  budget.max_time = "10m";
  const lenlab::PageSettings checked = lenlab::check_page_settings(request, budget, /*gpu=*/false);
  lenlab::fuzz::check_page_answer(request, checked, finding);
  return 0;
}
