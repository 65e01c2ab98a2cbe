import { createClient } from '@svc/client';
import { createHooks, type SvcHooks } from '@svc/react';

/** The hooks of the whole app, over one client. */
export type Api = SvcHooks;

/** The app's hooks for an API address (`…/v1` for the server, the bare origin for Prism) and a token. */
export function apiFor(baseUrl: string, token: string): Api {
  return createHooks(createClient({ baseUrl, token }));
}
