/** Whether two bundles differ at most in examples and prose, so that Prism picks the same answer on either. */
export declare function differOnlyInExamples(a: Record<string, unknown>, b: Record<string, unknown>): boolean;
/** The newer bundle's value of the example Prism answered from the older one. */
export declare function currentExample(answer: {
  served: Record<string, unknown>;
  current: Record<string, unknown>;
  method: string;
  pathname: string;
  status: number;
  mediaType: string;
  body: unknown;
  preferred?: string;
}): { name: string; value: unknown } | undefined;
