#include "lab/cli/serve_command.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <ostream>

#include "core/atomic_file.hpp"
#include "cost/budget.hpp"
#include "lab/cli/cli_options.hpp"
#include "lab/run/device.hpp"
#include "lab/serve/interfaces.hpp"
#include "lab/serve/request_guard.hpp"
#include "lab/serve/server_paths.hpp"

namespace lenlab {

ServeCommand::ServeCommand(CLI::App& app) {
  options_.queue.out = "served";
  options_.queue.device = "auto";  // as lenlab train: a GPU when this build has CUDA and one
  options_.queue.budget.max_time = "10m";  // a page run is seconds; a typo must not take the day
  command_ = app.add_subcommand(
      "serve",
      "A live page in the browser for a class: pick settings, start runs, watch the curves grow");
  CLI::App& c = *command_;
  c.option_defaults()->always_capture_default();
  c.add_option("--host", options_.host,
               "Address to listen on: 127.0.0.1 (this machine only) or 0.0.0.0 (every network, "
               "e.g. a classroom)");
  add_setting(c, "--port", options_.port, "Port to listen on; 0: any free port (printed)")
      ->check(int_range(0, 65535));
  c.add_option("--out", options_.queue.out,
               "Where runs are saved (OUT/runs/<id>/, like lenlab run's); `lenlab plot OUT` draws "
               "them");
  add_setting(c, "--max-running", options_.queue.max_running,
              "Runs training at once (each on one thread); the rest wait in the queue")
      ->check(int_range(1, 256));
  add_setting(c, "--max-queued", options_.queue.max_queued,
              "Runs waiting at most; more are refused until one starts")
      ->check(int_range(1, 100000));
  c.add_option("--device", options_.queue.device, "Where to train: auto, cpu or cuda")
      ->check(CLI::IsMember(device_names()));
  c.add_option(
       "--corpus", corpora_,
       "Offer a text corpus to the page by name, NAME=FILE (repeatable); students choose "
       "NAME, never a path. The build's default corpus, when it has one, is offered as 'kjv'")
      ->allow_extra_args(false)
      ->default_str("");
  c.add_option("--allow-host", options_.allow_hosts,
               "Another name the page may be reached by (repeatable), e.g. a DNS name of this "
               "machine; the Host header must name this server")
      ->allow_extra_args(false)
      ->default_str("");
  c.add_option(
       "--allow-origin", options_.allow_origins,
       "Another origin (SCHEME://HOST[:PORT]) whose pages may use this server (repeatable); "
       "by default only the server's own")
      ->allow_extra_args(false)
      ->default_str("");
  c.add_flag("--classroom", classroom_,
             "Ask for a join code and a name even on 127.0.0.1 (on any other --host always)");
  c.add_option("--join-code", options_.classroom.join_code,
               "The code students type once per browser (4-64 letters and digits); default: "
               "drawn at random and printed at start")
      ->default_str("");
  c.add_option("--teacher-code", options_.classroom.teacher_code,
               "The teacher's code: sees every run, cancels any, closes and opens the queue; "
               "default: drawn at random and printed at start")
      ->default_str("");
  add_setting(c, "--runs-per-student", options_.classroom.runs_per_student,
              "Runs one student may have queued or training at once")
      ->check(int_range(1, 100000));
  c.add_option("--max-time", options_.queue.budget.max_time,
               "Refuse a run estimated to take longer than this, e.g. 30s, 10m");
  c.add_option("--max-memory", options_.queue.budget.max_memory,
               "Refuse a run estimated to need more memory than this, e.g. 2G");
  c.footer(
      "Example:\n  lenlab serve --port 8080 --out served/   then open http://127.0.0.1:8080/\n"
      "  lenlab serve --host 0.0.0.0 --corpus plays=texts/plays.txt --out served/\n"
      "A request whose Host is not this server's, whose Origin is another site's, or a POST that "
      "is not JSON is refused; the page names a corpus or a run to fine-tune by name or number, "
      "never by path.\n"
      "On any --host but loopback (or with --classroom) students join with a code and a name; "
      "their runs are theirs, the teacher's code sees and cancels all.\n"
      "Runs whose settings were trained before (in OUT) are read back, not trained again.");
}

int ServeCommand::run(const CommandLine& line) {
  std::ostream& out = line.out;
  // Limits that cannot be read are refused now, not at the first student's submission.
  parse_duration(options_.queue.budget.max_time, "--max-time");
  if (!options_.queue.budget.max_memory.empty())
    parse_size(options_.queue.budget.max_memory, "--max-memory");
  options_.queue.corpora = offered_corpora(corpora_);
  allowed_clients(options_.host, 0, options_.allow_hosts, options_.allow_origins);  // checked now
  options_.classroom.enabled = classroom_ || !is_loopback(options_.host) ||
                               !options_.classroom.join_code.empty() ||
                               !options_.classroom.teacher_code.empty();
  PageServer server(options_);
  const int port = server.bind();
  ensure_writable_directory(options_.queue.out / "runs");  // after bind: a refusal writes nothing
  std::string urls;
  for (const std::string& url : reachable_urls(options_.host, port))
    urls += (urls.empty() ? "" : " ") + url;
  out << fmt::format("lenlab serve: listening on {} (runs saved in {}; Ctrl-C stops)\n", urls,
                     options_.queue.out.string());
  if (const Classroom& room = server.classroom(); room.enabled())
    out << fmt::format(
        "lenlab serve: a classroom. Students open the address above and type the join code {} "
        "and a name (up to {} runs each at once). Your teacher code, for your own browser only: "
        "{}\n",
        room.options().join_code, room.options().runs_per_student, room.options().teacher_code);
  out << std::flush;
  server.listen();
  return 0;
}

}  // namespace lenlab
