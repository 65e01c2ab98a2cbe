import type { Reporter, TestModule } from 'vitest/node';

const PREFIX = '[stateful]';

/**
 * Prints which stateful tests did not run (against the mock they are declared but skipped), so the
 * gap is visible in every run's output and not only in vitest's skip count.
 */
export default class StatefulReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (test.name.startsWith(PREFIX) && result.state === 'skipped') {
          // Against a server, a stateful test skips only for a reason of the target's: it is shown.
          const note = process.env.CONTRACT_TARGET === 'server' && result.note ? `: ${result.note}` : '';
          skipped.push(`${test.name.slice(PREFIX.length).trim()}${note}`);
        }
      }
    }
    const target = process.env.CONTRACT_TARGET ?? 'mock';
    if (process.env.CONTRACT_CROSS_CHECKS === '0') {
      process.stdout.write(
        '\nCross-checks off (CONTRACT_CROSS_CHECKS=0): Request-Id = error.request_id and Location were not checked.\n',
      );
    }
    if (skipped.length === 0) return;
    const where = target === 'mock' ? 'against the mock' : `against the ${target}`;
    process.stdout.write(
      `\n${skipped.length} stateful tests not run ${where}:\n${skipped.map((n) => `  - ${n}`).join('\n')}\n` +
        'Run them with CONTRACT_TARGET=server CONTRACT_BASE_URL=... CONTRACT_KEY_FILE=...\n\n',
    );
  }
}
