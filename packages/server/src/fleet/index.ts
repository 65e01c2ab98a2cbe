export type {
  HostState,
  NoCapacity,
  Placed,
  PlacementHost,
  PlacementOptions,
  PlacementPolicy,
  PlacementRequest,
  PlacementResult,
  Resource,
  Resources,
} from './placement.js';
export { matchesLabels, placeComputer, RESOURCES, shortOf } from './placement.js';
