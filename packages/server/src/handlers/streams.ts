// TEMPORARY, on this helper branch only (never merged to main): the stream endpoints are written on
// the `streams-server` branch; until that lands here, both answer 404 so the server still builds.
import { ApiError } from '../errors.js';

const notYetServed = async (): Promise<never> => {
  throw new ApiError('not_found', 'streams are not served by this build yet');
};

export const streamHandlers = { streamWorkspaceEvents: notYetServed, streamOperationOutput: notYetServed };
