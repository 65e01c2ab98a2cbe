import type { Api } from './api.js';
import { ComputerList } from './ComputerList.js';
import { CreateComputer } from './CreateComputer.js';

export interface AppProps {
  api: Api;
  /** The workspace to show; default the first one the caller is a member of. */
  workspace?: string | undefined;
  /** Computers per page. */
  limit?: number | undefined;
  /** A mock server's `Prefer` header for creates (`code=409`), to see an error. */
  prefer?: string | undefined;
}

export function App({ api, workspace, limit = 20, prefer }: AppProps) {
  const workspaces = api.useQuery('/workspaces', undefined, { enabled: workspace === undefined });
  const chosen = workspace ?? workspaces.data?.workspaces[0]?.name;
  if (!chosen) return <p>{workspaces.error ? workspaces.error.message : 'Loading…'}</p>;
  return (
    <main>
      <h1>Computers in {chosen}</h1>
      <CreateComputer api={api} workspace={chosen} prefer={prefer} />
      <ComputerList api={api} workspace={chosen} limit={limit} />
    </main>
  );
}
