#include "lab/serve/json_reply.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {

using Json = nlohmann::ordered_json;

void send_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  // replace: a message may quote what a client sent, which need not be UTF-8.
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace),
                  "application/json; charset=utf-8");
}

void send_error(httplib::Response& res, int status, const std::string& message,
                const std::string& field) {
  send_json(res, status, errors_json({{field, message}}));
}

std::string body_too_large_message() {
  return fmt::format(
      "the request body is larger than the limit of {} bytes (a run's settings take a few "
      "hundred)",
      kMaxBody);
}

ReadBody read_json_body(const httplib::Request&, httplib::Response& res,
                        const httplib::ContentReader& read) {
  // Its Content-Type is application/json: the pre-routing check refused any other (415).
  // Counted here, whatever the transfer encoding: httplib's own limit (set_payload_max_length)
  // holds only for a Content-Length.
  std::string body;
  bool too_large = false;
  const bool whole = read([&](const char* data, size_t n) {
    if (body.size() + n > kMaxBody) {
      too_large = true;
      return false;
    }
    body.append(data, n);
    return true;
  });
  if (too_large || res.status == 413) return {{}, 413, body_too_large_message()};
  if (!whole)
    return {{},
            400,
            "the request body could not be read: cut short, malformed chunks, or not "
            "all of it within 5 s"};
  try {
    return {parse_page_request(body), 200, ""};
  } catch (const UsageError& e) {
    return {{}, 400, e.what()};
  }
}

std::optional<Json> json_body_or_refuse(const httplib::Request& req, httplib::Response& res,
                                        const httplib::ContentReader& read) {
  ReadBody body = read_json_body(req, res, read);
  if (body.status == 200) return std::move(body.json);
  GuardedServer::close_after_reply();
  send_error(res, body.status, body.error);
  return std::nullopt;
}

}  // namespace lenlab
