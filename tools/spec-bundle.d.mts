/** The source root that redocly.yaml in `specDir` names (first `apis` entry), else `openapi.yaml`. */
export declare function rootOf(specDir: string): string;
/** Bundles `specDir` with `redocly bundle` into `output` and returns the parsed document. */
export declare function bundleSpec(
  specDir: string,
  output: string,
  ext?: 'json' | 'yaml',
): Record<string, unknown>;
