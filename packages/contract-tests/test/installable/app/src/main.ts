// An app outside the repository: it installed @svc/client and @svc/contract from their tarballs with npm.
// The API address and the token come from the page's query string (`?api=…&token=…`).
import { ApiError, createClient, unwrap } from '@svc/client';
import type { Schema } from '@svc/contract';

const params = new URLSearchParams(location.search);
const out = document.querySelector('#out') as HTMLElement;
const client = createClient({ baseUrl: params.get('api') ?? '', token: params.get('token') ?? '' });

async function main(): Promise<Record<string, unknown>> {
  const { identity } = await unwrap(client.GET('/me'));
  const { workspaces } = await unwrap(client.GET('/workspaces', { params: { query: { limit: 5 } } }));
  const first: Schema<'Workspace'> | undefined = workspaces[0];
  // For the type checker only, never sent: a request to a path the server does not serve would reject
  // with nobody to catch it.
  const unsent = () =>
    // @ts-expect-error the contract's types reject a path the spec does not have
    client.GET('/no-such-path');
  void unsent;
  return {
    ok: true,
    principal: identity.principal.id,
    workspaces: workspaces.length,
    first: first?.name ?? null,
  };
}

main()
  .then((result) => {
    out.textContent = JSON.stringify(result);
  })
  .catch((error: unknown) => {
    const code = error instanceof ApiError ? error.code : String(error);
    out.textContent = JSON.stringify({ ok: false, code });
  })
  .finally(() => {
    out.dataset.done = 'true';
  });
