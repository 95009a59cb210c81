#include "lab/serve/server.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text_file.hpp"
#include "lab/run/device.hpp"
#include "lab/serve/class_routes.hpp"
#include "lab/serve/classroom.hpp"
#include "lab/serve/json_reply.hpp"
#include "lab/serve/page_settings.hpp"
#include "lab/serve/request_guard.hpp"
#include "lab/serve/run_sample.hpp"
#include "lab/serve/server_paths.hpp"
#include "lab/serve/web_assets.hpp"

// Last: it includes <resolv.h>, whose `_res` macro breaks Eigen headers included after it.
#include "lab/serve/guarded_http.hpp"

namespace lenlab {

using Json = nlohmann::ordered_json;

namespace {

// server.hpp's limits.
HttpLimits page_limits() {
  HttpLimits limits;
  limits.request_read = std::chrono::seconds(5);
  limits.idle = std::chrono::seconds(2);
  limits.write = std::chrono::seconds(5);
  limits.request_bytes = kMaxBody + (64 << 10);
  limits.max_requests = 100;
  limits.workers = 256;
  return limits;
}

}  // namespace

struct PageServer::Impl {
  ServeOptions options;
  RunQueue queue;
  Classroom classroom;
  GuardedServer http{page_limits()};
  bool gpu = false;        // whether runs train on a GPU: the budget check's machine
  AllowedClients allowed;  // set by bind(), before any request
  ServerPaths paths;       // corpus by name, init_from by run number
  RunSamples samples;      // each finished text run's sample, written on first request

  explicit Impl(ServeOptions o)
      : options(std::move(o)),
        queue(options.queue),
        classroom(options.classroom),
        gpu(Device::choose(options.queue.device).gpu()),
        paths(page_server_paths(
            options.queue.corpora, [this](int number) { return queue.completed_run(number); },
            [this] { return queue.size(); })) {}

  // The rules of server-side paths for one member: a parent run only among the runs they see.
  ServerPaths paths_for(const Member& m) const {
    if (m.runs_the_class()) return paths;
    return page_server_paths(
        options.queue.corpora,
        [this, m](int number) -> FinishedRun {
          const auto run = queue.run_json(number);
          if (!run || !sees_run(m, *run)) return {};
          return queue.completed_run(number);
        },
        [this] { return queue.size(); });
  }

  std::vector<std::string> corpus_names() const {
    std::vector<std::string> names;
    for (const auto& [name, file] : options.queue.corpora) names.push_back(name);
    return names;
  }
};

namespace {

constexpr const char* kApi =
    "GET /api/options, POST /api/runs, GET /api/runs, GET /api/runs/N, "
    "GET /api/runs/N/results.csv, GET /api/runs/N/sample, DELETE /api/runs/N, GET /api/session, "
    "POST /api/join, "
    "POST /api/queue, GET /api/results.csv";

// Answered without a session: the page's files and what it needs to show the join form.
bool open_to_all(const std::string& path) {
  return path.rfind("/api/", 0) != 0 || path == "/api/session" || path == "/api/join";
}

// The message of an error httplib answers by itself (the request never reached a handler).
std::string library_error_message(const httplib::Request& req, int status) {
  switch (status) {
    case 400:
      return "the request could not be read: not valid HTTP, or not all of it arrived within 5 s "
             "of its first byte";
    case 404:
      return fmt::format("nothing at {} {}; the page is GET /, the API {}", req.method, req.path,
                         kApi);
    case 413:
      return body_too_large_message();
    case 414:
      return "the URL is longer than 8192 characters";
    default:
      return fmt::format("HTTP {} for {} {}; the API is {}", status, req.method, req.path, kApi);
  }
}

}  // namespace

PageServer::PageServer(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& s = *impl_;
  s.http.set_payload_max_length(kMaxBody);  // a form's settings, never more
  // httplib's default adds SO_REUSEPORT, with which a second `lenlab serve` on the same port
  // binds too and the kernel splits the students' requests between the two. SO_REUSEADDR alone
  // still lets a restarted server take its port back at once.
  s.http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Every error a client gets is JSON with a message, the errors of httplib's own making too
  // (bad HTTP, no such path, a body over the limit). After its 400 or 413 the rest of the request
  // may be unread: the connection is closed (a handler's 400, a refused setting, keeps it).
  using HandlerResponse = httplib::Server::HandlerResponse;
  s.http.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return HandlerResponse::Unhandled;  // a handler's own message
        if (res.status == 400 || res.status == 413) GuardedServer::close_after_reply();
        send_error(res, res.status, library_error_message(req, res.status));
        return HandlerResponse::Handled;
      }));
  s.http.set_exception_handler([](const httplib::Request& req, httplib::Response& res,
                                  std::exception_ptr ep) {
    std::string what = "an unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, fmt::format("the server failed on {} {}: {}", req.method, req.path, what));
  });
  // Who may ask (request_guard.hpp), before any handler: a refused request queues nothing. Its body
  // is unread, so the connection closes after the reply.
  s.http.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    const auto header = [&req](const char* name) -> std::optional<std::string> {
      if (!req.has_header(name)) return std::nullopt;
      return req.get_header_value(name);
    };
    const auto refusal = refuse_request(s.allowed, req.method, header("Host"), header("Origin"),
                                        header("Content-Type"));
    if (refusal) {
      GuardedServer::close_after_reply();
      send_error(res, refusal->status, refusal->message);
      return HandlerResponse::Handled;
    }
    // In a classroom, the API is for those who joined (lab/serve/classroom.hpp).
    if (open_to_all(req.path) || request_member(s.classroom, req).role != Role::kNobody)
      return HandlerResponse::Unhandled;
    GuardedServer::close_after_reply();
    send_error(res, 401,
               "join the class first: POST /api/join with the code the teacher shows (the page "
               "asks for it); a session ends when the server restarts");
    return HandlerResponse::Handled;
  });
  for (const WebAsset& asset : web_assets())
    s.http.Get(std::string(asset.path), [&asset](const httplib::Request&, httplib::Response& res) {
      res.set_content(asset.body.data(), asset.body.size(),
                      std::string(asset.content_type).c_str());
    });
  s.http.Get("/api/options", [&s](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, page_options(s.options.queue.max_running, s.corpus_names()));
  });
  s.http.Post("/api/runs", [&s](const httplib::Request& req, httplib::Response& res,
                                const httplib::ContentReader& read) {
    const auto body = json_body_or_refuse(req, res, read);
    if (!body) return;
    const Member m = request_member(s.classroom, req);
    const PageSettings checked =
        check_page_settings(*body, s.options.queue.budget, s.gpu, s.paths_for(m));
    if (!checked.errors.empty()) {
      send_json(res, 400, errors_json(checked.errors));
      return;
    }
    try {
      const int limit = m.role == Role::kStudent ? s.classroom.options().runs_per_student : 0;
      const int number = s.queue.submit(checked.spec, run_owner(m), limit);
      const Json run = *s.queue.run_json(number);
      Json reply = {{"number", number}, {"id", run["id"]}, {"state", run["state"]}};
      if (run.contains("queue_position")) reply["queue_position"] = run["queue_position"];
      send_json(res, 200, reply);
    } catch (const QueueFull& e) {
      send_error(res, 503, e.what());
    } catch (const OwnerLimit& e) {
      send_error(res, 429, e.what());
    }
  });
  s.http.Get("/api/runs", [&s](const httplib::Request& req, httplib::Response& res) {
    const Member m = request_member(s.classroom, req);
    Json runs =
        s.queue.runs_json(m.runs_the_class() ? std::nullopt : std::optional<std::string>(m.name));
    runs["queue_open"] = s.queue.is_open();
    send_json(res, 200, runs);
  });
  s.http.Get(R"(/api/runs/(\d{1,9}))", [&s](const httplib::Request& req, httplib::Response& res) {
    const auto run = s.queue.run_json(std::stoi(req.matches[1]));
    if (run && sees_run(request_member(s.classroom, req), *run))
      send_json(res, 200, *run);
    else
      send_error(res, 404, fmt::format("no run {}", req.matches[1].str()));
  });
  s.http.Get(R"(/api/runs/(\d{1,9})/results\.csv)", [&s](const httplib::Request& req,
                                                         httplib::Response& res) {
    const int number = std::stoi(req.matches[1]);
    const auto run = s.queue.run_json(number);
    const auto folder = s.queue.finished_folder(number);
    if (!run || !sees_run(request_member(s.classroom, req), *run) || !folder ||
        !std::filesystem::exists(*folder / "results.csv")) {
      send_error(res, 404, fmt::format("run {} has no results yet", req.matches[1].str()));
      return;
    }
    res.set_header("Content-Disposition",
                   fmt::format("attachment; filename=\"{}.csv\"", folder->filename().string()));
    res.set_content(read_text_file(*folder / "results.csv"), "text/csv; charset=utf-8");
  });
  // A finished text run's sample (lab/serve/run_sample.hpp): nothing of it is the client's.
  s.http.Get(R"(/api/runs/(\d{1,9})/sample)", [&s](const httplib::Request& req,
                                                   httplib::Response& res) {
    const int number = std::stoi(req.matches[1]);
    const auto run = s.queue.run_json(number);
    const FinishedRun done = s.queue.completed_run(number);
    if (!run || !sees_run(request_member(s.classroom, req), *run) || done.state != "completed") {
      send_error(res, 404, fmt::format("run {} has no sample: it has not completed", number));
      return;
    }
    if ((*run)["settings"].value("task", "") != "text") {
      send_error(res, 404, fmt::format("run {} has no sample: only a text run writes one", number));
      return;
    }
    try {
      send_json(res, 200, s.samples.get(number, done.folder));
    } catch (const UsageError& e) {
      send_error(res, 409, fmt::format("run {} could not write a sample: {}", number, e.what()));
    }
  });
  add_class_routes(s.http, s.classroom, s.queue);
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
  s.http.widen_backlog();
  s.allowed = allowed_clients(s.options.host, port, s.options.allow_hosts, s.options.allow_origins);
  s.classroom.bound_to(port);
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

const Classroom& PageServer::classroom() const {
  return impl_->classroom;
}

}  // namespace lenlab
