// Preloaded into a profiled server (`bench/run.mjs --cpu-prof`): SIGUSR2 exits at once, so `--cpu-prof`
// writes its profile even when a graceful stop would wait on simulated operations that take minutes.
process.on('SIGUSR2', () => process.exit(0));
