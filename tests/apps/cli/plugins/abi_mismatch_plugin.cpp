// A plugin built for another plugin ABI: its entry point answers version 999 and, as the
// contract says, registers nothing. The host must refuse it naming both versions.
#include <cstdint>

extern "C" __attribute__((visibility("default"))) std::uint32_t rulestream_plugin_register(
    std::uint32_t /*host_abi_version*/, void* /*registrar*/) {
  return 999;
}
