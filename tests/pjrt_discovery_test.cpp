// Finding PJRT plugins (files laid out as the packages install them, in a scratch folder), the
// errors of plugins that cannot be loaded, and the device choice when none is found.
#include <gtest/gtest.h>

#include <fstream>

#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/backends/pjrt/pjrt_client.h"
#include "kiln/backends/pjrt/plugin_discovery.h"
#include "support/testing.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using pjrt::PluginKind;

fs::path touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "not a library";
  return path;
}

TEST(PjrtDiscovery, FindsPluginsInPreferenceOrderEachOnce) {
  fs::path dir = testing::scratch_folder();
  fs::path packages = dir / "lib/python3.11/site-packages";
  touch(packages / "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
  touch(packages / "jax_plugins/xla_cuda13/xla_cuda_plugin.so");
  touch(packages / "libtpu/libtpu.so");
  fs::path mine = touch(dir / "plugins/my_tpu.so");
  fs::path explicit_plugin = touch(dir / "plugins/custom.so");

  pjrt::DiscoverySources sources;
  sources.explicit_plugin = explicit_plugin.string();
  // The CPU plugin named again through the variable is listed once; a missing file is ignored.
  sources.names_and_paths = "tpu:" + mine.string() + ",cpu:" +
                            (packages / "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so").string() +
                            ",gpu:" + (dir / "missing.so").string() + ",malformed";
  sources.package_dirs = {packages.string(), (dir / "absent").string()};
  std::vector<pjrt::PluginLocation> found = pjrt::discover_plugins(sources);

  ASSERT_EQ(found.size(), 5u);
  EXPECT_EQ(found[0].path, explicit_plugin.string());
  EXPECT_EQ(found[0].found_by, "--pjrt_plugin");
  EXPECT_EQ(found[0].kind, PluginKind::other);
  EXPECT_EQ(found[1].path, mine.string());
  EXPECT_EQ(found[1].kind, PluginKind::tpu);
  EXPECT_EQ(found[1].found_by, "PJRT_NAMES_AND_LIBRARY_PATHS (tpu)");
  EXPECT_EQ(found[2].kind, PluginKind::cpu);
  EXPECT_EQ(found[3].kind, PluginKind::tpu);
  EXPECT_EQ(found[3].found_by, "libtpu package");
  EXPECT_EQ(found[4].kind, PluginKind::cuda);
  EXPECT_EQ(found[4].found_by, "jax-cuda13-pjrt package");
}

// `pip install xla-cpu-pjrt` under pyenv: PATH holds ~/.pyenv/shims, whose python3 is a script,
// and the package lies under ~/.pyenv/versions/<version>.
TEST(PjrtDiscovery, FindsAPluginInstalledByAPythonBehindPyenvShims) {
  fs::path root = testing::scratch_folder() / ".pyenv";
  touch(root / "shims/python3");
  fs::path other = touch(root / "versions/3.10.14/lib/python3.10/site-packages/"
                                "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
  fs::path selected = touch(root / "versions/3.12.4/lib/python3.12/site-packages/"
                                   "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
  testing::ScopedEnvironment path("PATH", (root / "shims").string());
  testing::ScopedEnvironment version("PYENV_VERSION", "3.12.4");

  std::vector<pjrt::PluginLocation> found =
      pjrt::discover_plugins(pjrt::discovery_sources(""));
  std::vector<pjrt::PluginLocation> ours;
  for (const pjrt::PluginLocation& location : found) {
    if (location.path.find(root.string()) == 0) ours.push_back(location);
  }
  // The selected version's plugin first, then the other version's.
  ASSERT_EQ(ours.size(), 2u);
  EXPECT_EQ(ours[0].path, selected.string());
  EXPECT_EQ(ours[0].found_by, "xla-cpu-pjrt package");
  EXPECT_EQ(ours[1].path, other.string());
}

TEST(PjrtDiscovery, GuessesKindsFromNames) {
  EXPECT_EQ(pjrt::guess_plugin_kind("/x/libtpu.so"), PluginKind::tpu);
  EXPECT_EQ(pjrt::guess_plugin_kind("/x/jax_plugins/xla_cuda12/xla_cuda_plugin.so"),
            PluginKind::cuda);
  EXPECT_EQ(pjrt::guess_plugin_kind("GPU"), PluginKind::cuda);
  EXPECT_EQ(pjrt::guess_plugin_kind("/x/xla_cpu_pjrt.so"), PluginKind::cpu);
  EXPECT_EQ(pjrt::guess_plugin_kind("/tpu_stuff/plugin.so"), PluginKind::other);
}

TEST(PjrtDiscovery, PluginsThatCannotLoadAreErrorsNamingThem) {
  fs::path dir = testing::scratch_folder();
  fs::path fake = touch(dir / "fake_plugin.so");
  std::string missing = testing::error_of([&] { pjrt::Client::open((dir / "none.so").string()); });
  EXPECT_NE(missing.find("none.so: dlopen failed"), std::string::npos) << missing;
  std::string bad = testing::error_of([&] { pjrt::Client::open(fake.string()); });
  EXPECT_NE(bad.find("fake_plugin.so: dlopen failed"), std::string::npos) << bad;
  // A real library that is no plugin.
  std::string not_plugin = testing::error_of([] { pjrt::Client::open("libm.so.6"); });
  EXPECT_NE(not_plugin.find("not a PJRT plugin (no GetPjrtApi symbol)"), std::string::npos)
      << not_plugin;
}

TEST(PjrtDiscovery, DeviceChoiceWithoutPlugins) {
  fs::path dir = testing::scratch_folder();
  pjrt::DiscoverySources none;
  std::string error = testing::error_of([&] { make_pjrt_backend_for(PluginKind::cuda, none); });
  EXPECT_NE(error.find("[--device] no PJRT cuda plugin found"), std::string::npos) << error;
  EXPECT_NE(error.find("--pjrt_plugin PATH"), std::string::npos) << error;
  // A TPU plugin file that does not load is no device: auto falls back (null: the CPU backend).
  pjrt::DiscoverySources broken;
  broken.names_and_paths = "tpu:" + touch(dir / "libtpu.so").string();
  EXPECT_EQ(make_accelerator_backend(broken), nullptr);
}

}  // namespace
}  // namespace kiln
