// `lenlab._lenlab`: the C++ engine as a Python extension (pybind11). Thin on purpose: each entry
// point fills the same options struct the CLI fills and calls the same function (run_train,
// run_eval, run_experiment), so a run from Python is a run from the CLI, folder and numbers alike.
// python/lenlab/__init__.py builds the user-facing API (Run objects, NumPy arrays) on top.
//
// The GIL is released while the engine runs. The engine's progress hook takes it back about ten
// times a second to report progress and to check for Ctrl-C (PyErr_CheckSignals): an interrupt
// unwinds the engine with the Python exception, leaving the run's folder as a killed CLI run
// leaves it ("running"), everything finished before kept.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/version.hpp"
#include "cost/run_cost.hpp"
#include "lab/experiment/experiment.hpp"
#include "lab/experiment/experiment_folder.hpp"
#include "lab/run/eval_run.hpp"
#include "lab/run/generate_run.hpp"
#include "lab/run/init_from.hpp"
#include "lab/run/run_train.hpp"
#include "lab/run/stream_run.hpp"
#include "models/custom_position_bias.hpp"
#include "models/safetensors.hpp"
#include "reparam/custom_reparam.hpp"
#include "report/comparison_rows.hpp"
#include "results/figure_setup.hpp"
#include "train/run_settings.hpp"

namespace py = pybind11;
using namespace lenlab;

namespace {

// A Python function over NumPy arrays (a reparam's f or inverse, a pe_bias function), called from
// the engine without the GIL (and possibly from several threads): call_python takes the GIL,
// calls it on a float64 array, copies the result out. A Python error is kept (the first one) and
// the engine unwound with a ReparamRaised; without_gil then raises the kept error as itself (a
// Python exception object cannot be carried through the engine, which runs without the GIL).
struct PythonFunction {
  py::object f;  // touched only with the GIL
  std::string role;
  ~PythonFunction() {
    if (!Py_IsInitialized()) {  // the registry outlived the interpreter: nothing to release
      f.release();
      return;
    }
    py::gil_scoped_acquire gil;
    f = py::object();
  }
};

PyObject* usage_error_type = PyExc_ValueError;  // lenlab.UsageError, once the module is loaded

// Unwinds the engine after a reparam function raised (its error is in pending_error).
struct ReparamRaised : std::runtime_error {
  ReparamRaised() : std::runtime_error("a Python function (reparam or pe_bias) raised") {}
};

std::mutex error_mutex;
// A pending_error is kept: the progress hook stops whatever still runs (another thread's run).
std::atomic<bool> reparam_failed{false};
std::optional<py::error_already_set> pending_error;  // guarded by error_mutex and the GIL

// Calls a Python function through `call(x)` on x = a float64 array of `in`'s n values, with the
// GIL, and copies its n results into out. A Python error (or a result of the wrong size) is kept
// and the engine unwound, as the struct above says.
template <class Call>
void call_python(const PythonFunction& fn, const double* in, double* out, size_t n, Call&& call) {
  py::gil_scoped_acquire gil;
  try {
    py::array_t<double> x(static_cast<py::ssize_t>(n), in);
    // NaN is how f says "undefined here" (the domain check probes past the targets): NumPy's
    // warnings about it would only be noise.
    py::object quiet = py::module_::import("numpy").attr("errstate")(
        py::arg("invalid") = "ignore", py::arg("divide") = "ignore", py::arg("over") = "ignore");
    quiet.attr("__enter__")();
    py::object result;
    try {
      result = call(x);
    } catch (...) {
      quiet.attr("__exit__")(py::none(), py::none(), py::none());
      throw;
    }
    quiet.attr("__exit__")(py::none(), py::none(), py::none());
    py::array_t<double, py::array::c_style | py::array::forcecast> y = result;
    if (static_cast<size_t>(y.size()) != n)
      throw UsageError("the " + fn.role + " returned " + std::to_string(y.size()) + " values for " +
                       std::to_string(n) + " inputs; it must be vectorized (one output per input)");
    const double* data = y.data();
    for (size_t i = 0; i < n; ++i) out[i] = data[i];
    return;
  } catch (py::error_already_set& e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!pending_error) pending_error.emplace(std::move(e));
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!pending_error) {
      PyErr_SetString(dynamic_cast<const UsageError*>(&e) ? usage_error_type : PyExc_ValueError,
                      e.what());
      pending_error.emplace();
    }
  }
  reparam_failed = true;
  throw ReparamRaised();
}

CustomReparam::ArrayFunction array_function(std::shared_ptr<PythonFunction> fn) {
  return [fn](const double* in, double* out, size_t n) {
    call_python(*fn, in, out, n, [&](py::array_t<double>& x) { return fn->f(x); });
  };
}

// Raises the Python error a reparam function raised during the last engine call, if any.
void raise_reparam_error() {
  std::lock_guard<std::mutex> lock(error_mutex);
  if (!pending_error) return;
  py::error_already_set e = std::move(*pending_error);
  pending_error.reset();
  reparam_failed = false;
  throw e;
}

void clear_reparam_error() {
  std::lock_guard<std::mutex> lock(error_mutex);
  pending_error.reset();
  reparam_failed = false;
}

void register_reparam(const std::string& name, py::object f, py::object inverse) {
  auto r = std::make_shared<CustomReparam>();
  r->name = name;
  r->f = array_function(std::make_shared<PythonFunction>(PythonFunction{f, "reparam's f"}));
  if (!inverse.is_none())
    r->inverse = array_function(
        std::make_shared<PythonFunction>(PythonFunction{inverse, "reparam's inverse"}));
  register_custom_reparam(std::move(r));
}

// pe_bias=b: b(d, h) over a float64 array of distances d and a head index h (an int).
void register_position_bias(const std::string& name, py::object b) {
  auto bias = std::make_shared<CustomPositionBias>();
  bias->name = name;
  auto fn = std::make_shared<PythonFunction>(PythonFunction{b, "pe_bias function"});
  bias->f = [fn](const double* d, size_t n, int head, double* out) {
    call_python(*fn, d, out, n, [&](py::array_t<double>& x) { return fn->f(x, head); });
  };
  register_custom_position_bias(std::move(bias));
}

// The engine's progress hook: counts work, and about ten times a second takes the GIL to report
// the fraction done and to check for Ctrl-C (an exception unwinds the engine). A reparam function
// that raised stops the run at once (without_gil then raises its error).
// `total_flops` may be set after the hook is made (once the settings are resolved).
std::function<void(double)> progress_hook(std::shared_ptr<double> total_flops,
                                          py::object progress) {
  struct State {
    double done = 0;
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  };
  auto state = std::make_shared<State>();
  auto callback = std::make_shared<py::object>(std::move(progress));
  return [state, callback, total_flops](double flops) {
    if (reparam_failed) throw ReparamRaised();
    state->done += flops;
    const auto now = std::chrono::steady_clock::now();
    if (now - state->last < std::chrono::milliseconds(100)) return;
    state->last = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!callback->is_none())
      (*callback)(*total_flops > 0 ? std::min(1.0, state->done / *total_flops) : 0.0);
  };
}

// Runs `work` without the GIL; then raises a reparam function's error, if one was kept.
template <class Work>
int without_gil(Work&& work) {
  clear_reparam_error();
  int code = 0;
  try {
    py::gil_scoped_release release;
    code = work();
  } catch (...) {
    // An interrupt or a reparam error may both be pending: the reparam's is the cause.
    raise_reparam_error();
    throw;
  }
  raise_reparam_error();
  return code;
}

TrainSpec spec_of(const std::string& settings_json) {
  return spec_from_json(parse_json_input(settings_json, "lenlab.train"), TrainSpec{},
                        "lenlab.train");
}

int train(const std::string& settings_json, const std::string& out, bool overwrite,
          const std::string& device, py::object progress, const std::string& command_line) {
  const TrainSpec spec = spec_of(settings_json);
  auto total = std::make_shared<double>(0.0);
  RunOptions o;
  o.out = out;
  o.overwrite = overwrite;
  o.device = device;
  o.command_line = command_line;
  o.on_work_done = progress_hook(total, progress);
  return without_gil([&] {
    // resolve() calls a Python reparam (the domain check): under without_gil, so that an error
    // it raised is the one the user sees.
    *total = estimate_run_cost(spec, resolve(spec).model).flops();
    return run_train(spec, o);
  });
}

// The test-time attention settings under their config keys, read the way a config's are.
TestTimeAttention attention_of(const std::string& attention_json, const char* command) {
  return spec_from_json(parse_json_input(attention_json, command), TrainSpec{}, command)
      .test_attention;
}

int evaluate_run(const std::string& run_dir, const std::string& out, const std::string& lengths,
                 const std::string& depths, int samples, bool predictions, bool overwrite,
                 const std::string& device, const std::string& attention_json,
                 const std::string& command_line, bool representation_stats,
                 int representation_projections) {
  EvalOptions o;
  o.representation_stats = representation_stats;
  o.representation_projections = representation_projections;
  o.run_dir = run_dir;
  o.out = out;
  o.lengths = lengths;
  o.depths = depths;
  o.samples = samples;
  o.predictions = predictions;
  o.overwrite = overwrite;
  o.device = device;
  o.command_line = command_line;
  o.attention = attention_of(attention_json, "lenlab eval");
  return without_gil([&] { return run_eval(o); });
}

// lenlab eval --stream: a text run reading one text through its cache, into `out`.
int stream_run(const std::string& run_dir, const std::string& out, const std::string& source,
               int64_t tokens, int chunk, bool overwrite, const std::string& device,
               const std::string& attention_json, const std::string& command_line) {
  StreamOptions o;
  o.run_dir = run_dir;
  o.out = out;
  o.source = source;
  o.max_tokens = tokens;
  o.chunk = chunk;
  o.overwrite = overwrite;
  o.device = device;
  o.command_line = command_line;
  o.attention = attention_of(attention_json, "lenlab eval --stream");
  return without_gil([&] { return run_stream(o); });
}

// lenlab generate: the written text (the prompt not repeated); on_token (a Python callable or
// None) is called with each token's text as it is written.
std::string generate_text(const std::string& run_dir, const std::string& prompt, int tokens,
                          double sample_temperature, int top_k, double top_p, uint64_t seed,
                          const std::string& device, const std::string& attention_json,
                          py::object on_token) {
  GenerateOptions o;
  o.run_dir = run_dir;
  o.prompt = prompt;
  o.tokens = tokens;
  o.sampling = {sample_temperature, top_k, top_p};
  o.seed = seed;
  o.device = device;
  o.attention = attention_of(attention_json, "lenlab generate");
  std::string written;
  auto callback = std::make_shared<py::object>(std::move(on_token));
  o.on_text = [&written, callback](const std::string& piece) {
    written += piece;
    py::gil_scoped_acquire gil;
    if (!callback->is_none()) (*callback)(piece);
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  };
  without_gil([&] { return run_generate(o); });
  return written;
}

int reproduce(const std::string& config_text, const std::string& config_source,
              const std::string& out, const std::vector<std::string>& figures, int n_seeds,
              int jobs, const std::string& device, bool dry_run, py::object progress,
              int seeds_until_decided) {
  ExperimentOptions o;
  // The sweep's waiting thread (this one, the GIL released) ticks ten times a second.
  auto callback = std::make_shared<py::object>(std::move(progress));
  o.on_tick = [callback](double fraction) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!callback->is_none()) (*callback)(fraction);
  };
  o.out = out;
  o.config_text = config_text;
  o.config_source = config_source;
  o.figures = figures;
  o.n_seeds = n_seeds;
  o.seeds_until_decided = seeds_until_decided;
  o.jobs = jobs;
  o.device = device;
  o.dry_run = dry_run;
  py::object sys_stdout = py::module_::import("sys").attr("stdout");
  std::ostringstream report;
  o.print = &report;
  const int code = without_gil([&] { return run_experiment(o); });
  if (dry_run) sys_stdout.attr("write")(report.str());
  return code;
}

// lenlab.compare(folder): the folder's method comparisons judged as its report.md judges them,
// the folder read as `lenlab plot` reads it; {column: list}, one entry per row
// (report/comparison_rows.hpp), the columns in the rows' order.
py::dict compare_folder(const std::string& folder) {
  const std::unique_ptr<ExperimentFolder> loaded = load_experiment_folder(folder);
  const std::vector<ComparisonRow> rows = comparison_rows(loaded->summaries);
  py::dict out;
  const auto column = [&](const char* name, auto field) {
    py::list values;
    for (const ComparisonRow& r : rows) values.append(r.*field);
    out[name] = values;
  };
  column("figure", &ComparisonRow::figure);
  column("task", &ComparisonRow::task);
  column("pe", &ComparisonRow::pe);
  column("metric", &ComparisonRow::metric);
  column("range", &ComparisonRow::range);
  column("lo", &ComparisonRow::lo);
  column("hi", &ComparisonRow::hi);
  column("main", &ComparisonRow::main);
  column("method", &ComparisonRow::method);
  column("baseline", &ComparisonRow::baseline);
  column("is_baseline", &ComparisonRow::is_baseline);
  column("n_seeds", &ComparisonRow::n_seeds);
  column("mean", &ComparisonRow::mean);
  column("min", &ComparisonRow::min);
  column("max", &ComparisonRow::max);
  column("rank", &ComparisonRow::rank);
  column("seeds_better", &ComparisonRow::seeds_better);
  column("seeds_paired", &ComparisonRow::seeds_paired);
  column("mean_difference", &ComparisonRow::mean_difference);
  column("interval_low", &ComparisonRow::interval_low);
  column("interval_high", &ComparisonRow::interval_high);
  column("median_difference", &ComparisonRow::median_difference);
  column("p_sign", &ComparisonRow::p_sign);
  column("p_wilcoxon", &ComparisonRow::p_wilcoxon);
  column("p_adjusted", &ComparisonRow::p_adjusted);
  column("smallest_detectable", &ComparisonRow::smallest_detectable);
  column("verdict", &ComparisonRow::verdict);
  column("reason", &ComparisonRow::reason);
  column("seeds_not_fit", &ComparisonRow::seeds_not_fit);
  column("in_range_rule", &ComparisonRow::in_range_rule);
  return out;
}

// The folder name a sweep gives these settings (results/figure_setup.hpp).
std::string run_id_of(const std::string& settings_json) {
  return run_id(with_parent_id(spec_of(settings_json)));  // init_from: the parent by its id
}

// The paper's config, as `lenlab reproduce` without --config runs it.
std::string paper_config() {
  return paper_config_text();
}

// Every tensor of a safetensors file as an array of its shape and stored type (float32, or
// float64 from a --precision float64 run), by name.
py::dict load_parameters(const std::string& path) {
  const SafeTensors st = load_safetensors(path);
  py::dict out;
  for (const NamedTensor& t : st.tensors) {
    const std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    const auto as = [&](auto scalar) -> py::object {
      py::array_t<decltype(scalar)> a(shape);
      std::copy(t.data.begin(), t.data.end(), a.mutable_data());
      return a;
    };
    out[py::str(t.name)] = t.dtype == "F64" ? as(double{}) : as(float{});
  }
  return out;
}

// Every setting's row (train/setting_rows.hpp): key → {"kind": string, integer, unsigned, number
// or switch, "test_time": whether Run.eval takes it}. The package's keywords come from here.
py::dict setting_rows() {
  py::dict out;
  TrainSpec spec;
  visit_spec_fields(spec, [&](const Setting& row, const auto& field) {
    using T = std::decay_t<decltype(field)>;
    if (row.has(Setting::kInternal)) return;
    std::string kind = "number";
    if constexpr (std::is_same_v<T, std::string>) kind = "string";
    if constexpr (std::is_same_v<T, int>) kind = row.has(Setting::kSwitch) ? "switch" : "integer";
    if constexpr (std::is_same_v<T, uint64_t>) kind = "unsigned";
    py::dict d;
    d["kind"] = kind;
    d["test_time"] = row.has(Setting::kTestTime);
    out[py::str(row.key)] = d;
  });
  return out;
}

}  // namespace

PYBIND11_MODULE(_lenlab, m) {
  m.doc() = "lenlab's C++ engine; use the lenlab package, not this module";
  usage_error_type = py::register_exception<UsageError>(m, "UsageError", PyExc_ValueError).ptr();
  m.def("register_reparam", &register_reparam, py::arg("name"), py::arg("f"),
        py::arg("inverse") = py::none());
  m.def("register_position_bias", &register_position_bias, py::arg("name"), py::arg("b"));
  m.def("train", &train, py::arg("settings_json"), py::arg("out"), py::arg("overwrite"),
        py::arg("device"), py::arg("progress"), py::arg("command_line"));
  m.def("evaluate", &evaluate_run, py::arg("run_dir"), py::arg("out"), py::arg("lengths"),
        py::arg("depths"), py::arg("samples"), py::arg("predictions"), py::arg("overwrite"),
        py::arg("device"), py::arg("attention_json"), py::arg("command_line"),
        py::arg("representation_stats") = false, py::arg("representation_projections") = 64);
  m.def("stream", &stream_run, py::arg("run_dir"), py::arg("out"), py::arg("source"),
        py::arg("tokens"), py::arg("chunk"), py::arg("overwrite"), py::arg("device"),
        py::arg("attention_json"), py::arg("command_line"));
  m.def("generate", &generate_text, py::arg("run_dir"), py::arg("prompt"), py::arg("tokens"),
        py::arg("sample_temperature"), py::arg("top_k"), py::arg("top_p"), py::arg("seed"),
        py::arg("device"), py::arg("attention_json"), py::arg("on_token"));
  m.def("reproduce", &reproduce, py::arg("config_text"), py::arg("config_source"), py::arg("out"),
        py::arg("figures"), py::arg("n_seeds"), py::arg("jobs"), py::arg("device"),
        py::arg("dry_run"), py::arg("progress"), py::arg("seeds_until_decided") = 0);
  m.def("compare", &compare_folder, py::arg("folder"));
  m.def("paper_config", &paper_config);
  m.def("run_id", &run_id_of, py::arg("settings_json"));
  m.def("setting_rows", &setting_rows);
  m.def("load_parameters", &load_parameters, py::arg("path"));
  m.attr("EXIT_OK") = static_cast<int>(kExitOk);
  m.attr("EXIT_DIVERGED") = static_cast<int>(kExitDiverged);
  m.attr("__version__") = version();  // CMakeLists.txt's project VERSION, as `lenlab --version`
}
