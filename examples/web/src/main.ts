// The page's script: @svc/client's browser entry, bundled by build.mjs. No framework.
import { ApiError, createClient, paginate } from '@svc/client';

const params = new URLSearchParams(location.search);
const workspace = params.get('workspace') ?? 'acme-dev';
const client = createClient({
  baseUrl: params.get('api') ?? 'http://127.0.0.1:4010',
  // The mock accepts any bearer token; a real server needs one from `svc token` or POST /auth/token.
  token: params.get('token') ?? 'mock-access-token',
});

const status = document.getElementById('status')!;
const list = document.getElementById('computers')!;
document.getElementById('workspace')!.textContent = workspace;

async function show(): Promise<void> {
  let count = 0;
  for await (const computer of paginate(client, '/workspaces/{workspace}/computers', {
    params: { path: { workspace } },
  })) {
    const item = document.createElement('li');
    item.textContent = `${computer.name} (${computer.size}, ${computer.image})`;
    item.dataset.state = computer.state;
    item.dataset.name = computer.name;
    list.append(item);
    count++;
  }
  status.textContent = `${count} computer(s)`;
}

show().catch((error: unknown) => {
  status.className = 'error';
  status.textContent = error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
});
