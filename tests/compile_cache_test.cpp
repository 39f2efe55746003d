// The runtime's compile cache on disk: a miss compiles and stores an entry, a second runtime on the
// same folder loads it (no compile), a changed key is a miss, an unusable entry is a logged miss
// that is overwritten; on a backend that serializes by design (a fake over the reference backend)
// and on XLA:CPU through PJRT (skipped without the plugin).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "kiln/backends/cpu/cpu_backend.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/ir/error.h"
#include "kiln/ir/ops.h"
#include "kiln/runtime/runtime.h"
#include "pjrt_test_util.h"
#include "support/testing.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// y = tanh(x * w) + b with x of the given shape; arguments with distinct values.
struct SmallGraph {
  Graph graph;
  Value y;

  explicit SmallGraph(Shape x_shape) {
    Value x = graph.input("x", DType::f32, x_shape);
    Value w = graph.input("w", DType::f32, {x_shape.back()}, InputRole::weight);
    Value b = graph.input("b", DType::f32, {});
    y = tanh(x * w) + b;
  }
  std::vector<Tensor> arguments() const {
    std::vector<Tensor> out;
    for (int32_t id : graph.inputs()) {
      const Node& node = graph.node(id);
      Tensor tensor(node.dtype, node.shape);
      for (int64_t i = 0; i < tensor.numel(); ++i) tensor.set(i, 0.1 * static_cast<double>(i + 1));
      out.push_back(std::move(tensor));
    }
    return out;
  }
  ProgramKey key(std::string_view backend) const { return program_key(graph, {y}, {}, backend); }
};

struct Logged {
  std::vector<std::string> lines;
  Runtime::Log sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

// The reference backend with serialization as a plugin offers it: the identity names a version,
// the bytes are fixed (with a newline and a NUL, as real ones have), loading compiles again and is
// counted.
class SerializingBackend : public Backend {
 public:
  explicit SerializingBackend(std::string version) : version_(std::move(version)) {}
  std::string_view name() const override { return "serializing"; }
  bool supports(const Node& node) const override { return inner_->supports(node); }
  std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs,
                                      const CompileSpec& spec) override {
    return inner_->compile(graph, outputs, spec);
  }
  bool serializes() const override { return true; }
  std::string cache_identity() const override { return "serializing " + version_; }
  std::optional<std::string> serialize(const Executable&) const override { return bytes(); }
  std::unique_ptr<Executable> deserialize(const std::string& saved, const Graph& graph,
                                          const std::vector<Value>& outputs,
                                          const CompileSpec& spec) override {
    check(saved == bytes(), "serializing", "not an executable of this backend");
    ++loads;
    return inner_->compile(graph, outputs, spec);
  }
  static std::string bytes() { return std::string("exe\n\0bytes", 10); }

  int loads = 0;

 private:
  std::unique_ptr<Backend> inner_ = make_reference_backend();
  std::string version_;
};

std::vector<fs::path> files_in(const fs::path& folder) {
  std::vector<fs::path> files;
  if (!fs::exists(folder)) return files;
  for (const auto& entry : fs::directory_iterator(folder)) files.push_back(entry.path());
  return files;
}

void overwrite(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(RuntimeDiskCache, AMissStoresAnEntryThatASecondRuntimeLoads) {
  fs::path folder = testing::scratch_folder() / "cache";
  SerializingBackend backend("1.0");
  SmallGraph small({2, 3});
  {
    Logged log;
    Runtime runtime(backend, log.sink(), folder.string());
    runtime.compile(small.graph, {small.y}, {}, "step");
    RuntimeCounters counters = runtime.counters();
    EXPECT_EQ(counters.compiles, 1);
    EXPECT_EQ(counters.disk_cache_misses, 1);
    EXPECT_EQ(counters.disk_cache_hits, 0);
    EXPECT_EQ(log.lines, std::vector<std::string>{"compiling the step for x f32(2,3)"});
  }
  ASSERT_EQ(files_in(folder).size(), 1u);  // the entry, no temporary file left
  EXPECT_EQ(files_in(folder)[0].extension(), ".entry");

  Logged log;
  Runtime again(backend, log.sink(), folder.string());
  Executable& loaded = again.compile(small.graph, {small.y}, {}, "step");
  EXPECT_EQ(&again.compile(small.graph, {small.y}, {}, "step"), &loaded);  // then from memory
  RuntimeCounters counters = again.counters();
  EXPECT_EQ(counters.compiles, 0);
  EXPECT_EQ(counters.disk_cache_hits, 1);
  EXPECT_EQ(counters.disk_cache_misses, 0);
  EXPECT_EQ(counters.cache_hits, 1);
  EXPECT_EQ(backend.loads, 1);
  EXPECT_EQ(log.lines,
            std::vector<std::string>{"loaded the step from the compile cache for x f32(2,3)"});
  EXPECT_NE(format_counters(counters).find(" cache_hits=1 disk_cache_hits=1 disk_cache_misses=0 "),
            std::string::npos)
      << format_counters(counters);
}

TEST(RuntimeDiskCache, AChangedShapeOrBackendVersionIsAMiss) {
  fs::path folder = testing::scratch_folder();
  SerializingBackend backend("1.0"), upgraded("1.1");
  SmallGraph small({2, 3}), longer({2, 5});
  Runtime(backend, {}, folder.string()).compile(small.graph, {small.y}, {}, "step");

  Logged log;
  Runtime runtime(backend, log.sink(), folder.string());
  runtime.compile(small.graph, {small.y}, {}, "step");
  runtime.compile(longer.graph, {longer.y}, {}, "step");
  EXPECT_EQ(runtime.counters().disk_cache_hits, 1);
  EXPECT_EQ(runtime.counters().disk_cache_misses, 1);
  EXPECT_EQ(runtime.counters().compiles, 1);
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_EQ(log.lines[1],
            "compiling the step again: x changed from f32(2,3) to f32(2,5); w changed from f32(3) "
            "to f32(5)");

  Runtime other_version(upgraded, {}, folder.string());
  other_version.compile(small.graph, {small.y}, {}, "step");
  EXPECT_EQ(other_version.counters().disk_cache_misses, 1);
  EXPECT_EQ(upgraded.loads, 0);
  EXPECT_EQ(files_in(folder).size(), 3u);
}

TEST(RuntimeDiskCache, UnusableEntriesAreLoggedMissesThatAreOverwritten) {
  fs::path folder = testing::scratch_folder();
  SerializingBackend backend("1.0");
  SmallGraph small({2, 3});
  Runtime(backend, {}, folder.string()).compile(small.graph, {small.y}, {}, "step");
  const fs::path entry = files_in(folder).at(0);
  const std::string whole = testing::read_text(entry);
  std::string flipped = whole;
  flipped[whole.size() / 2] ^= 0x20;
  DiskCache disk(folder.string(), backend.cache_identity());
  struct Case {
    std::string what, expected;
    std::function<void()> spoil;
  };
  const std::vector<Case> cases = {
      {"truncated", "corrupt or truncated entry (checksum mismatch)",
       [&] { overwrite(entry, whole.substr(0, whole.size() - 9)); }},
      {"a flipped byte", "corrupt or truncated entry", [&] { overwrite(entry, flipped); }},
      {"empty", "not a compile cache entry (0 bytes)", [&] { overwrite(entry, ""); }},
      {"rejected by the backend", "[serializing] not an executable of this backend",
       [&] { disk.store(small.key(backend.name()), "garbage"); }},
  };
  for (const Case& spoilt : cases) {
    spoilt.spoil();
    Logged log;
    Runtime runtime(backend, log.sink(), folder.string());
    runtime.compile(small.graph, {small.y}, {}, "step");
    EXPECT_EQ(runtime.counters().compiles, 1) << spoilt.what;
    EXPECT_EQ(runtime.counters().disk_cache_misses, 1) << spoilt.what;
    ASSERT_EQ(log.lines.size(), 2u) << spoilt.what;
    EXPECT_EQ(log.lines[0].find("the compile cache has no usable step: "), 0u) << log.lines[0];
    EXPECT_NE(log.lines[0].find(spoilt.expected), std::string::npos) << log.lines[0];
    EXPECT_EQ(log.lines[1], "compiling the step for x f32(2,3)");
    EXPECT_EQ(testing::read_text(entry), whole) << spoilt.what << ": overwritten";
  }
}

TEST(RuntimeDiskCache, EntriesKeepTheirKeyAndIdentity) {
  fs::path folder = testing::scratch_folder();
  DiskCache disk(folder.string(), "fake 1.0");
  SmallGraph small({2, 3}), longer({2, 5});
  const ProgramKey key = small.key("fake"), other = longer.key("fake");
  EXPECT_EQ(disk.load(key), std::nullopt);
  const std::string bytes("\0\n12 34\n", 8);
  disk.store(key, bytes);
  EXPECT_EQ(disk.load(key), bytes);
  EXPECT_EQ(fs::path(disk.path(key)).parent_path(), folder);
  EXPECT_NE(disk.path(key), disk.path(other));
  EXPECT_NE(disk.path(key), DiskCache(folder.string(), "fake 1.1").path(key));
  // An entry under another key's name (a file-name collision) is not that key's program.
  fs::copy_file(disk.path(key), disk.path(other));
  EXPECT_EQ(testing::error_of([&] { disk.load(other); }),
            "[" + disk.path(other) +
                "] the entry is of another program or backend (a file-name collision)");
  EXPECT_EQ(key.text(), key.text().substr(0, 28) +
                            " inputs=f32(2,3),f32(3),f32() backend=fake options=" +
                            CompileOptions{}.key() + " donations= replicas=1");
}

TEST(RuntimeDiskCache, AFolderThatCannotBeMadeIsLoggedAndTheProgramStillCompiles) {
  fs::path blocker = testing::scratch_folder() / "file";
  overwrite(blocker, "not a folder");
  SerializingBackend backend("1.0");
  SmallGraph small({2, 3});
  Logged log;
  Runtime runtime(backend, log.sink(), (blocker / "cache").string());
  runtime.compile(small.graph, {small.y}, {}, "step");
  EXPECT_EQ(runtime.counters().compiles, 1);
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_EQ(
      log.lines[1].find("the compile cache could not keep the step: [" +
                        (blocker / "cache").string() + "] cannot create the compile cache folder"),
      0u)
      << log.lines[1];
}

TEST(RuntimeDiskCache, BackendsThatDoNotSerializeLeaveTheFolderAlone) {
  fs::path folder = testing::scratch_folder() / "cache";
  auto backend = make_cpu_backend();
  SmallGraph small({2, 3});
  Runtime runtime(*backend, {}, folder.string());
  runtime.compile(small.graph, {small.y}, {}, "step");
  EXPECT_EQ(runtime.counters().compiles, 1);
  EXPECT_EQ(runtime.counters().disk_cache_misses, 0);
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_EQ(format_counters(runtime.counters()).find("disk_cache"), std::string::npos);
}

TEST(RuntimeDiskCache, TheFolderFlagDefaultsToTheUsersCacheFolder) {
  {
    testing::ScopedEnvironment xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(compile_cache_folder(std::nullopt), "/xdg/kiln/compile");
  }
  testing::ScopedEnvironment xdg("XDG_CACHE_HOME", std::nullopt);
  {
    testing::ScopedEnvironment home("HOME", "/home/someone");
    EXPECT_EQ(compile_cache_folder(std::nullopt), "/home/someone/.cache/kiln/compile");
  }
  testing::ScopedEnvironment home("HOME", std::nullopt);
  EXPECT_EQ(compile_cache_folder(std::nullopt), "");
  EXPECT_EQ(compile_cache_folder("none"), "");
  EXPECT_EQ(compile_cache_folder(""), "");
  EXPECT_EQ(compile_cache_folder("/tmp/programs"), "/tmp/programs");
}

TEST(PjrtCompileCache, ASecondRuntimeLoadsTheProgramAndComputesTheSame) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  std::unique_ptr<Backend> backend = make_pjrt_backend(plugin);
  ASSERT_TRUE(backend->serializes());
  fs::path folder = testing::scratch_folder();
  SmallGraph small({4, 3}), longer({4, 5});
  Runtime first(*backend, {}, folder.string());
  std::vector<Tensor> compiled =
      first.compile(small.graph, {small.y}, {}, "step").run(small.arguments());
  EXPECT_EQ(first.counters().compiles, 1);
  EXPECT_EQ(first.counters().disk_cache_misses, 1);
  ASSERT_EQ(files_in(folder).size(), 1u);

  Logged log;
  Runtime second(*backend, log.sink(), folder.string());
  std::vector<Tensor> loaded =
      second.compile(small.graph, {small.y}, {}, "step").run(small.arguments());
  EXPECT_EQ(second.counters().compiles, 0);
  EXPECT_EQ(second.counters().disk_cache_hits, 1);
  EXPECT_EQ(log.lines,
            std::vector<std::string>{"loaded the step from the compile cache for x f32(4,3)"});
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].to_doubles(), compiled[0].to_doubles());
  // The loaded program checks its arguments as the compiled one does.
  EXPECT_NE(testing::error_of([&] {
              second.compile(small.graph, {small.y}, {}, "step").run(longer.arguments());
            }).find("input 'x' expects f32(4,3), got f32(4,5)"),
            std::string::npos);

  second.compile(longer.graph, {longer.y}, {}, "step");
  EXPECT_EQ(second.counters().compiles, 1);
  EXPECT_EQ(second.counters().disk_cache_misses, 1);
  EXPECT_EQ(files_in(folder).size(), 2u);
}

TEST(PjrtCompileCache, EntriesThePluginOrTheLoweringRejectAreLoggedMissesThatRecompile) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  std::unique_ptr<Backend> backend = make_pjrt_backend(plugin);
  fs::path folder = testing::scratch_folder();
  SmallGraph small({4, 3});
  const std::vector<Tensor> expected = Runtime(*backend, {}, folder.string())
                                           .compile(small.graph, {small.y}, {}, "step")
                                           .run(small.arguments());
  DiskCache disk(folder.string(), backend->cache_identity());
  const ProgramKey key = small.key(backend->name());
  const std::string saved = *disk.load(key);
  const std::string source = saved.substr(0, saved.find('\n') + 1);
  const std::vector<std::pair<std::string, std::string>> spoilt = {
      {source + "not XLA's bytes", "PJRT_Executable_DeserializeAndLoad failed"},
      {"0123456789abcdef\n" + saved.substr(source.size()),
       "the saved executable was compiled from another StableHLO module"},
  };
  for (const auto& [bytes, reason] : spoilt) {
    disk.store(key, bytes);
    Logged log;
    Runtime runtime(*backend, log.sink(), folder.string());
    std::vector<Tensor> results =
        runtime.compile(small.graph, {small.y}, {}, "step").run(small.arguments());
    EXPECT_EQ(runtime.counters().compiles, 1);
    EXPECT_EQ(runtime.counters().disk_cache_misses, 1);
    ASSERT_EQ(log.lines.size(), 2u);
    EXPECT_NE(log.lines[0].find(reason), std::string::npos) << log.lines[0];
    EXPECT_EQ(results[0].to_doubles(), expected[0].to_doubles());
    EXPECT_EQ(disk.load(key)->substr(0, source.size()), source);  // overwritten
  }
}

}  // namespace
}  // namespace kiln
