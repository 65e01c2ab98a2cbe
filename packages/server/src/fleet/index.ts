export type { Resource, Resources } from '../platform/resources.js';
export { RESOURCES } from '../platform/resources.js';
export type {
  HostState,
  NoCapacity,
  Placed,
  PlacementHost,
  PlacementOptions,
  PlacementPolicy,
  PlacementRequest,
  PlacementResult,
} from './placement.js';
export { matchesLabels, placeComputer, shortOf } from './placement.js';
