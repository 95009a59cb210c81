#include "lab/serve/server.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text_file.hpp"
#include "lab/run/device.hpp"
#include "lab/serve/page_settings.hpp"
#include "lab/serve/web_assets.hpp"

// Last: it includes <resolv.h>, whose `_res` macro breaks Eigen headers included after it.
#include <httplib.h>

namespace lenlab {

using Json = nlohmann::ordered_json;

struct PageServer::Impl {
  ServeOptions options;
  RunQueue queue;
  httplib::Server http;
  bool gpu = false;  // whether runs train on a GPU: the budget check's machine

  explicit Impl(ServeOptions o)
      : options(std::move(o)),
        queue(options.queue),
        gpu(Device::choose(options.queue.device).gpu()) {}
};

namespace {

void send_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json; charset=utf-8");
}

Json errors_json(const std::vector<FieldError>& errors) {
  Json list = Json::array();
  for (const FieldError& e : errors)
    list.push_back(
        {{"field", e.field.empty() ? Json(nullptr) : Json(e.field)}, {"message", e.message}});
  return {{"errors", list}};
}

void not_found(httplib::Response& res, const std::string& what) {
  send_json(res, 404, errors_json({{"", what}}));
}

}  // namespace

PageServer::PageServer(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& s = *impl_;
  s.http.set_payload_max_length(1 << 20);  // a form's settings, never more
  // httplib's default adds SO_REUSEPORT, with which a second `lenlab serve` on the same port
  // binds too and the kernel splits the students' requests between the two. SO_REUSEADDR alone
  // still lets a restarted server take its port back at once.
  s.http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  for (const WebAsset& asset : web_assets())
    s.http.Get(std::string(asset.path), [&asset](const httplib::Request&, httplib::Response& res) {
      res.set_content(asset.body.data(), asset.body.size(),
                      std::string(asset.content_type).c_str());
    });
  s.http.Get("/api/options", [&s](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, page_options(s.options.queue.max_running));
  });
  s.http.Post("/api/runs", [&s](const httplib::Request& req, httplib::Response& res) {
    Json body;
    try {
      body = Json::parse(req.body);
    } catch (const Json::exception& e) {
      send_json(res, 400,
                errors_json({{"", fmt::format("the request is not JSON ({})", e.what())}}));
      return;
    }
    const PageSettings checked = check_page_settings(body, s.options.queue.budget, s.gpu);
    if (!checked.errors.empty()) {
      send_json(res, 400, errors_json(checked.errors));
      return;
    }
    try {
      const int number = s.queue.submit(checked.spec);
      const Json run = *s.queue.run_json(number);
      Json reply = {{"number", number}, {"id", run["id"]}, {"state", run["state"]}};
      if (run.contains("queue_position")) reply["queue_position"] = run["queue_position"];
      send_json(res, 200, reply);
    } catch (const QueueFull& e) {
      send_json(res, 503, errors_json({{"", e.what()}}));
    }
  });
  s.http.Get("/api/runs", [&s](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, s.queue.runs_json());
  });
  s.http.Get(R"(/api/runs/(\d{1,9}))", [&s](const httplib::Request& req, httplib::Response& res) {
    if (const auto run = s.queue.run_json(std::stoi(req.matches[1])))
      send_json(res, 200, *run);
    else
      not_found(res, fmt::format("no run {}", req.matches[1].str()));
  });
  s.http.Get(R"(/api/runs/(\d{1,9})/results\.csv)",
             [&s](const httplib::Request& req, httplib::Response& res) {
               const auto folder = s.queue.finished_folder(std::stoi(req.matches[1]));
               if (!folder || !std::filesystem::exists(*folder / "results.csv")) {
                 not_found(res, fmt::format("run {} has no results yet", req.matches[1].str()));
                 return;
               }
               res.set_header("Content-Disposition", fmt::format("attachment; filename=\"{}.csv\"",
                                                                 folder->filename().string()));
               res.set_content(read_text_file(*folder / "results.csv"), "text/csv; charset=utf-8");
             });
}

PageServer::~PageServer() = default;

int PageServer::bind() {
  Impl& s = *impl_;
  const int port =
      s.options.port == 0
          ? s.http.bind_to_any_port(s.options.host)
          : (s.http.bind_to_port(s.options.host, s.options.port) ? s.options.port : -1);
  if (port < 0)
    throw UsageError(fmt::format(
        "cannot listen on {}:{} (in use, or not an address of this machine); choose another "
        "--port (0: any free one) or --host",
        s.options.host, s.options.port));
  return port;
}

void PageServer::listen() {
  impl_->http.listen_after_bind();
}

void PageServer::stop() {
  impl_->http.stop();
}

RunQueue& PageServer::queue() {
  return impl_->queue;
}

}  // namespace lenlab
