// A shared library that is not a rulestream plugin: it has no rulestream_plugin_register.
extern "C" __attribute__((visibility("default"))) int not_a_rulestream_plugin() {
  return 0;
}
