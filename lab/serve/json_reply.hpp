#pragma once
// How the live page's handlers answer (lab/serve/server.cpp, lab/serve/class_routes.cpp): every
// reply is JSON, every error {"errors": [{"field": null or a setting, "message": "..."}]}, and a
// request body is read as a flat JSON object within the body limit.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "lab/serve/page_settings.hpp"

// Last among the includes: it includes <resolv.h>, whose `_res` macro breaks Eigen headers.
#include "lab/serve/guarded_http.hpp"

namespace lenlab {

inline constexpr std::size_t kMaxBody = 1 << 20;  // a form's settings take a few hundred bytes

void send_json(httplib::Response& res, int status, const nlohmann::ordered_json& body);
void send_error(httplib::Response& res, int status, const std::string& message,
                const std::string& field = "");

// A request body as a flat JSON object (parse_page_request), or the 400/413 to send.
struct ReadBody {
  nlohmann::ordered_json json;
  int status = 200;
  std::string error;
};
ReadBody read_json_body(const httplib::Request& req, httplib::Response& res,
                        const httplib::ContentReader& read);

// The body as read_json_body reads it, or nullopt once its 400/413 is sent (the connection then
// closes: the rest of the body may be unread).
std::optional<nlohmann::ordered_json> json_body_or_refuse(const httplib::Request& req,
                                                          httplib::Response& res,
                                                          const httplib::ContentReader& read);

// The message of a 413 (the body limit), shared by httplib's own refusal and read_json_body's.
std::string body_too_large_message();

}  // namespace lenlab
