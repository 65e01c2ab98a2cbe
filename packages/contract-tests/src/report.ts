// The reports of `pnpm contract` (bin/contract.mjs): JUnit XML for CI and a Markdown summary for people.
// Written here rather than by vitest's junit reporter, which marks only tests declared `it.skip` as
// skipped: a test that skips itself at run time (`ctx.skip(reason)`, when the target refuses what it
// needs) would read as passed, and its reason would be lost. Here every skipped test is `<skipped>` with
// its reason, in both reports.
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { Reporter, SerializedError, TestCase, TestModule } from 'vitest/node';

/** Options of {@link ContractReporter}. */
export interface ContractReportOptions {
  /** The directory junit.xml and summary.md are written to. */
  out: string;
  /** What the summary names as the target: its base URL and its kind. */
  baseUrl: string;
  target: 'mock' | 'server';
  /** Test files are named relative to this directory in the reports. */
  root: string;
}

/** The outcome of a run, once {@link ContractReporter.onTestRunEnd} has written the reports. */
export interface ContractOutcome {
  passed: number;
  failed: number;
  skipped: number;
  /** Errors outside any test (a file that did not load, an unhandled rejection). */
  errors: number;
}

/** Text as XML 1.0 allows it: escaped, without terminal colour codes or other control characters. */
const xml = (text: string) =>
  [...stripVTControlCharacters(text)]
    .filter((c) => c >= ' ' || c === '\t' || c === '\n' || c === '\r')
    .join('')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
const cell = (text: string) => stripVTControlCharacters(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const seconds = (ms: number | undefined) => ((ms ?? 0) / 1000).toFixed(3);

/**
 * A vitest reporter that writes `junit.xml` and `summary.md`; `outcome` holds the counts afterwards.
 *
 * @example
 * const reporter = new ContractReporter({ out: 'reports/contract', baseUrl, target: 'server', root });
 * await startVitest('test', ['test/contract.test.ts'], { root, reporters: ['default', reporter] });
 * process.exit(reporter.outcome?.failed === 0 ? 0 : 1);
 */
export class ContractReporter implements Reporter {
  outcome: ContractOutcome | undefined;

  constructor(private readonly options: ContractReportOptions) {}

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>): void {
    const { out, root } = this.options;
    const suites: string[] = [];
    const failures: [TestCase, string][] = [];
    const skips: [TestCase, string][] = [];
    const outside = unhandled.map((e) => e.message);
    let passed = 0;
    for (const module of modules) {
      const name = relative(root, module.moduleId);
      const cases: string[] = [];
      const tests = [...module.children.allTests()];
      let failed = 0;
      let skipped = 0;
      for (const test of tests) {
        const result = test.result();
        const time = seconds(test.diagnostic()?.duration);
        const open = `    <testcase classname="${xml(name)}" name="${xml(test.fullName)}" time="${time}"`;
        if (result.state === 'failed') {
          failed += 1;
          const error = result.errors[0];
          const message = error?.message ?? 'failed';
          failures.push([test, message.split('\n')[0] ?? '']);
          const detail = result.errors.map((e) => e.stack ?? e.message).join('\n\n');
          cases.push(
            `${open}>\n      <failure message="${xml(message)}" type="${xml(error?.name ?? 'Error')}">${xml(detail)}</failure>\n    </testcase>`,
          );
        } else if (result.state === 'skipped' || result.state === 'pending') {
          skipped += 1;
          const reason =
            result.state === 'pending' ? 'did not run' : (result.note ?? `declared ${test.options.mode}`);
          skips.push([test, reason]);
          cases.push(`${open}>\n      <skipped message="${xml(reason)}"/>\n    </testcase>`);
        } else {
          passed += 1;
          cases.push(`${open}/>`);
        }
      }
      const moduleErrors = module.errors();
      outside.push(...moduleErrors.map((e) => `${name}: ${e.message}`));
      const time = seconds(module.diagnostic().duration);
      suites.push(
        `  <testsuite name="${xml(name)}" tests="${tests.length}" failures="${failed}" errors="${moduleErrors.length}" skipped="${skipped}" time="${time}">`,
        ...cases,
        ...moduleErrors.map((e) => `    <system-err>${xml(e.stack ?? e.message)}</system-err>`),
        '  </testsuite>',
      );
    }
    const total = passed + failures.length + skips.length;
    this.outcome = { passed, failed: failures.length, skipped: skips.length, errors: outside.length };
    writeFileSync(
      join(out, 'junit.xml'),
      [
        '<?xml version="1.0" encoding="UTF-8" ?>',
        `<testsuites name="pnpm contract" tests="${total}" failures="${failures.length}" errors="${outside.length}" skipped="${skips.length}">`,
        ...suites,
        '</testsuites>',
        '',
      ].join('\n'),
    );
    writeFileSync(join(out, 'summary.md'), this.summary(failures, skips, outside));
  }

  /** The Markdown summary: counts, every failure with its first message line, every skip with its reason. */
  private summary(failures: [TestCase, string][], skips: [TestCase, string][], outside: string[]): string {
    const { passed, failed, skipped, errors } = this.outcome!;
    const lines = [
      `# Contract suite against ${this.options.baseUrl}`,
      '',
      `Target: ${this.options.target}. ${passed} passed, ${failed} failed, ${skipped} skipped, ` +
        `${passed + failed + skipped} in all${errors > 0 ? `; ${errors} errors outside the tests` : ''}.`,
      '',
      failed === 0 && errors === 0 ? 'No contract violations.' : '| test | violation |',
    ];
    if (failed > 0 || errors > 0) lines.push('| --- | --- |');
    for (const [test, message] of failures)
      lines.push(`| ${cell(test.fullName)} | ${cell(message).slice(0, 300)} |`);
    for (const message of outside) lines.push(`| (outside any test) | ${cell(message).slice(0, 300)} |`);
    if (skipped > 0) {
      lines.push('', '## Skipped', '', '| test | reason |', '| --- | --- |');
      for (const [test, reason] of skips) lines.push(`| ${cell(test.fullName)} | ${cell(reason)} |`);
    }
    return `${lines.join('\n')}\n`;
  }
}
