// `lenlab serve` trusts no client (lab/serve/request_guard.hpp): a request whose Host does not
// name the server, whose Origin is another site's, or a POST that is not JSON is refused before
// it is routed, and nothing is queued. Over a real socket on loopback, as a browser on another
// site or a DNS-rebinding page would send them.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "lab/serve/interfaces.hpp"
#include "lab/serve/request_guard.hpp"
#include "lab/serve/server.hpp"
#include "tests/support/serve_support.hpp"
#include "tests/support/test_support.hpp"

// Last: it includes <resolv.h>, whose `_res` macro breaks Eigen headers included after it.
#include <httplib.h>
#include "tests/lab/serve_test_support.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

// A raw request with the given header lines (each "Name: value"), a body sent as it is.
std::string request(const std::string& method, const std::string& path,
                    const std::vector<std::string>& headers, const std::string& body = "") {
  std::string r = method + " " + path + " HTTP/1.1\r\nConnection: close\r\n";
  for (const std::string& h : headers) r += h + "\r\n";
  if (method == "POST") r += fmt::format("Content-Length: {}\r\n", body.size());
  return r + "\r\n" + body;
}

}  // namespace

TEST_CASE("a cross-site POST is refused before it is routed, and nothing is queued") {
  TempDir dir;
  ServeOptions o;
  o.queue.out = dir.path;
  ServedPage page(o);
  const std::string host = fmt::format("Host: 127.0.0.1:{}", page.port);
  const std::string settings = tiny().dump();

  SUBCASE("a form-like text/plain POST from another site's page") {
    const std::string answer = round_trip(
        page.port,
        request("POST", "/api/runs",
                {host, "Origin: http://evil.example", "Content-Type: text/plain"}, settings));
    CHECK(status_of(answer) == 403);
    const std::string message = message_of(answer);
    CHECK(message.find("Origin") != std::string::npos);
    CHECK(message.find("http://evil.example") != std::string::npos);
    CHECK(message.find("--allow-origin") != std::string::npos);
  }
  SUBCASE("a JSON POST from another site's page") {
    const std::string answer = round_trip(
        page.port, request("POST", "/api/runs",
                           {host, "Origin: http://evil.example:" + std::to_string(page.port),
                            "Content-Type: application/json"},
                           settings));
    CHECK(status_of(answer) == 403);
    CHECK(message_of(answer).find("Origin") != std::string::npos);
  }
  SUBCASE("a text/plain POST with no Origin (a client that is no browser, or an old one)") {
    const std::string answer = round_trip(
        page.port, request("POST", "/api/runs", {host, "Content-Type: text/plain"}, settings));
    CHECK(status_of(answer) == 415);
    const std::string message = message_of(answer);
    CHECK(message.find("application/json") != std::string::npos);
    CHECK(message.find("'text/plain'") != std::string::npos);
  }
  SUBCASE("a form POST, and one with no Content-Type") {
    const std::string form = round_trip(
        page.port, request("POST", "/api/runs",
                           {host, "Content-Type: application/x-www-form-urlencoded"}, "task=mean"));
    CHECK(status_of(form) == 415);
    CHECK(message_of(form).find("application/x-www-form-urlencoded") != std::string::npos);
    const std::string none = round_trip(page.port, request("POST", "/api/runs", {host}, settings));
    CHECK(status_of(none) == 415);
    CHECK(message_of(none).find("no Content-Type") != std::string::npos);
  }
  CHECK(page.server.queue().size() == 0);
  CHECK(PageJson::parse(body_of(round_trip(page.port, get_request("/api/runs"))))["runs"].empty());
}

TEST_CASE("the Host header must name this server (DNS rebinding), with or without its port") {
  TempDir dir;
  ServeOptions o;
  o.queue.out = dir.path;
  ServedPage page(o);
  const auto get = [&](const std::vector<std::string>& headers) {
    return round_trip(page.port, request("GET", "/api/options", headers));
  };

  const std::string evil = get({"Host: evil.example"});
  CHECK(status_of(evil) == 403);
  const std::string message = message_of(evil);
  CHECK(message.find("Host") != std::string::npos);
  CHECK(message.find("evil.example") != std::string::npos);
  CHECK(message.find("'localhost'") != std::string::npos);
  CHECK(message.find("--allow-host") != std::string::npos);
  CHECK(status_of(get({"Host: evil.example:" + std::to_string(page.port)})) == 403);
  CHECK(status_of(get({})) == 403);  // none at all
  CHECK(message_of(get({})).find("no Host header") != std::string::npos);
  // Another port of this machine is another origin.
  CHECK(status_of(get({"Host: localhost:" + std::to_string(page.port + 1)})) == 403);

  for (const std::string& good : std::vector<std::string>{
           "localhost", "LOCALHOST", "127.0.0.1", "[::1]", "localhost:" + std::to_string(page.port),
           "127.0.0.1:" + std::to_string(page.port), "[::1]:" + std::to_string(page.port)}) {
    INFO("Host: " << good);
    CHECK(status_of(get({"Host: " + good})) == 200);
  }
  // The page's own requests: same origin, JSON.
  const std::string own = fmt::format("http://localhost:{}", page.port);
  CHECK(status_of(round_trip(
            page.port, request("POST", "/api/runs",
                               {"Host: localhost:" + std::to_string(page.port), "Origin: " + own,
                                "Content-Type: application/json; charset=utf-8"},
                               tiny().dump()))) == 200);
  page.server.queue().wait_until_idle();
}

TEST_CASE("--allow-host and --allow-origin add names, and a bad one is refused naming it") {
  TempDir dir;
  ServeOptions o;
  o.queue.out = dir.path;
  o.allow_hosts = {"lab.example.org"};
  o.allow_origins = {"https://course.example.org/"};
  ServedPage page(o);
  const auto status = [&](const std::vector<std::string>& headers) {
    return status_of(round_trip(page.port, request("GET", "/api/options", headers)));
  };
  CHECK(status({"Host: lab.example.org"}) == 200);
  CHECK(status({fmt::format("Host: lab.example.org:{}", page.port),
                fmt::format("Origin: http://lab.example.org:{}", page.port)}) == 200);
  CHECK(status({"Host: localhost", "Origin: https://course.example.org"}) == 200);
  CHECK(status({"Host: localhost", "Origin: http://course.example.org"}) == 403);  // scheme
  CHECK(status({"Host: localhost", "Origin: null"}) == 403);
  CHECK(status({"Host: other.example.org"}) == 403);

  for (const std::string bad : {"http://lab.example.org", "lab.example.org:80", "a b", ""}) {
    INFO("--allow-host " << bad);
    CHECK_THROWS_WITH_AS(allowed_clients("127.0.0.1", 1, {bad}, {}),
                         doctest::Contains(("--allow-host '" + bad + "'").c_str()), UsageError);
  }
  for (const std::string bad : {"lab.example.org", "ftp://lab.example.org", "http://a/b"}) {
    INFO("--allow-origin " << bad);
    CHECK_THROWS_WITH_AS(allowed_clients("127.0.0.1", 1, {}, {bad}),
                         doctest::Contains(("--allow-origin '" + bad + "'").c_str()), UsageError);
  }
}

TEST_CASE("on 0.0.0.0 the machine's addresses and hostname are allowed hosts, and printed") {
  const AllowedClients loopback = allowed_clients("127.0.0.1", 8080, {}, {});
  CHECK(loopback.hosts == std::set<std::string>{"localhost", "127.0.0.1", "[::1]"});
  const AllowedClients any = allowed_clients("0.0.0.0", 8080, {}, {});
  const std::vector<std::string> urls = reachable_urls("0.0.0.0", 8080);
  REQUIRE(!urls.empty());
  CHECK(urls.back() == "http://127.0.0.1:8080/");
  for (const InterfaceAddress& a : interface_addresses()) {
    INFO("address " << a.address);
    CHECK(any.hosts.count(a.ipv6 ? "[" + a.address + "]" : a.address) == 1);
    const bool printed =
        std::find(urls.begin(), urls.end(), "http://" + a.address + ":8080/") != urls.end();
    CHECK(printed == (!a.ipv6 && (!a.loopback || a.address == "127.0.0.1")));
  }
  if (!host_name().empty()) CHECK(any.hosts.count(host_name()) == 1);
  CHECK(loopback.hosts.count(host_name()) == (host_name() == "localhost" ? 1u : 0u));
  CHECK(reachable_urls("10.1.2.3", 9000) == std::vector<std::string>{"http://10.1.2.3:9000/"});
  CHECK(reachable_urls("::1", 9000) == std::vector<std::string>{"http://[::1]:9000/"});
}
