/** One of the linters `lintSpec` runs. */
export type Linter = 'redocly-sources' | 'redocly-bundle' | 'spectral';
/** The linters, in the order they are reported. */
export declare const LINTERS: readonly Linter[];
/** Severity names, gravest first. */
export declare const SEVERITIES: readonly ['error', 'warning', 'info', 'hint'];

/** One finding, at its place in the sources. */
export interface Finding {
  /** Absolute path of the source file. */
  file: string;
  line: number;
  column: number;
  severity: 'error' | 'warning' | 'info' | 'hint';
  /** Redocly's ruleId or Spectral's code. */
  rule: string;
  /** One line. */
  message: string;
  tool: 'redocly' | 'spectral';
}

/** Runs the linters over a spec directory and maps every finding to the sources. */
export declare function lintSpec(options: {
  specDir: string;
  /** JSON bundle; default dist/openapi.json in specDir. */
  bundle?: string;
  /** YAML bundle; default dist/openapi.yaml in specDir. */
  bundleYaml?: string;
  /** Spectral ruleset; default rules/spectral.yaml in specDir. */
  ruleset?: string;
  only?: readonly Linter[];
}): Promise<{ findings: Finding[]; failures: string[] }>;

/** `spec/<file>:<line>:<column> <severity> <rule> <message>`, the path relative to `base`. */
export declare function formatFinding(finding: Finding, base: string): string;
/** The one summary line. */
export declare function summarize(findings: readonly Finding[], failures: readonly string[]): string;
