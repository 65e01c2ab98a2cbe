/**
 * The computer as a driver sees it. In a file of its own so that the files layer (which the driver
 * interface names) can use it without an import cycle.
 *
 * @example
 * const computer: DriverComputer = { id, workspace_id, name: 'web-1', size: 'small', image: 'busybox', labels: {} };
 */
export interface DriverComputer {
  id: string;
  workspace_id: string;
  name: string;
  size: string;
  image: string;
  labels: Record<string, string>;
  /** The snapshot it is created from (design §4.2), when it was; its image is the snapshot's. */
  snapshot_id?: string | null;
  /** Its screen's size, for a computer whose image has a display (design §18); null otherwise. */
  screen_width?: number | null;
  screen_height?: number | null;
  /** The host it lives on (design §4.4), under a fleet; the simulated driver has none. */
  host_id?: string | null;
}
