import type { TestProject } from 'vitest/node';
import { startPrism } from '../src/prism.js';

/** Against the mock (the default), one Prism on a free port for the whole run; stopped by its pid. */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if ((process.env.CONTRACT_TARGET ?? 'mock') !== 'mock' || process.env.CONTRACT_BASE_URL) {
    project.provide('contractBaseUrl', process.env.CONTRACT_BASE_URL ?? '');
    return undefined;
  }
  const prism = await startPrism();
  project.provide('contractBaseUrl', prism.baseUrl);
  return () => prism.stop();
}
