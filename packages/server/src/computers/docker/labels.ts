import type { DriverComputer } from '../driver.js';

/** Labels on every container the Docker driver makes; it lists and touches no other container. */
export const LABEL = {
  managed: 'svc.managed',
  instance: 'svc.instance',
  computer: 'svc.computer_id',
  workspace: 'svc.workspace_id',
} as const;

/**
 * The container of a computer is named after its deployment and id: Docker refuses a second container
 * of one name, so two replicas creating the same computer at once still make exactly one.
 *
 * @example
 * containerName('default', computer.id); // 'svc-default-01kdv…'
 */
export function containerName(instance: string, computerId: string): string {
  return `svc-${instance}-${computerId}`;
}

/** The labels of a computer's container. */
export function containerLabels(instance: string, computer: DriverComputer): Record<string, string> {
  return {
    [LABEL.managed]: 'true',
    [LABEL.instance]: instance,
    [LABEL.computer]: computer.id,
    [LABEL.workspace]: computer.workspace_id,
  };
}

/** The Engine API `label` filter that selects this deployment's containers (and, given, one computer's). */
export function labelFilter(instance: string, computerId?: string): string[] {
  const filter = [`${LABEL.managed}=true`, `${LABEL.instance}=${instance}`];
  if (computerId) filter.push(`${LABEL.computer}=${computerId}`);
  return filter;
}

/** Whether `labels` mark a container as this deployment's container of `computerId`. */
export function isOurs(
  labels: Record<string, string> | undefined,
  instance: string,
  computerId: string,
): boolean {
  return (
    labels?.[LABEL.managed] === 'true' &&
    labels[LABEL.instance] === instance &&
    labels[LABEL.computer] === computerId
  );
}
