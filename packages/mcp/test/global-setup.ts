import { startPrism } from '@svc/contract-tests/prism';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    prismUrl: string;
  }
}

/** One Prism mock of the bundled spec for the whole run, stopped by its pid. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const prism = await startPrism();
  project.provide('prismUrl', prism.baseUrl);
  return () => prism.stop();
}
