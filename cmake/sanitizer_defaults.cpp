// Sanitizer settings linked into every executable of a -DFABRIC_SANITIZE=ON
// build (the runtime looks for them in the executable only). The fabric
// tests run the tools in a guest with a clean environment, so ASAN_OPTIONS
// cannot reach them; these defaults can (the variables still override).
// A sanitizer report ends the run with status 86, which no tool uses, so a
// test that checks exit statuses cannot mistake it for a verdict.

extern "C" {

__attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "halt_on_error=1:detect_leaks=1:exitcode=86:detect_stack_use_after_return=1:strict_string_checks=1";
}

__attribute__((visibility("default"), used)) const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1:exitcode=86";
}

__attribute__((visibility("default"), used)) const char* __lsan_default_options() { return "exitcode=86"; }

}  // extern "C"
