// Runs twice (vitest.config.ts): in Node with MSW's interception, and in Chromium with its service worker.
import { createClient, unwrap } from '@svc/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { BASE, freshMock, use } from '../test/msw.js';
import { App } from './App.js';
import { apiFor } from './api.js';

const api = apiFor(BASE, 'test-token');

function renderApp(limit = 2) {
  const queryClient = new QueryClient();
  render(
    <QueryClientProvider client={queryClient}>
      <App api={api} workspace="acme-dev" limit={limit} />
    </QueryClientProvider>,
  );
}

const names = () => screen.queryAllByTestId('computer').map((li) => li.dataset.name);

async function create(name: string) {
  await waitFor(() =>
    expect((screen.getByRole('button', { name: 'Create' }) as HTMLButtonElement).disabled).toBe(false),
  );
  fireEvent.change(screen.getByLabelText('name'), { target: { value: name } });
  fireEvent.click(screen.getByRole('button', { name: 'Create' }));
}

describe('the app on the mock', () => {
  it('lists computers page by page until has_more is false', async () => {
    freshMock();
    const client = createClient({ baseUrl: BASE, token: 't' });
    for (const name of ['c-1', 'c-2', 'c-3'])
      await unwrap(
        client.POST('/workspaces/{workspace}/computers', {
          params: { path: { workspace: 'acme-dev' } },
          body: { name, size: 'small', image: 'debian-13' },
        }),
      );
    renderApp(2);
    await waitFor(() => expect(names()).toEqual(['c-3', 'c-2']));
    fireEvent.click(await screen.findByRole('button', { name: 'Load more' }));
    await waitFor(() => expect(names()).toHaveLength(4));
    fireEvent.click(await screen.findByRole('button', { name: 'Load more' }));
    await waitFor(() =>
      expect(screen.getByRole('region', { name: 'computers' }).dataset.complete).toBe('true'),
    );
    expect(names()).toEqual(['c-3', 'c-2', 'c-1', 'test-db-1', 'build-runner-1']);
  });

  it('creates a computer and watches it reach running', async () => {
    freshMock();
    renderApp(10);
    await create('box-1');
    await waitFor(() => expect(screen.getByTestId('created').dataset.state).toBe('running'));
    expect(screen.getByTestId('created').textContent).toContain('box-1: running');
    await waitFor(() => expect(names()[0]).toBe('box-1'));
  });

  it('shows the typed error of the status chosen for one request: 409 already_exists', async () => {
    const mock = freshMock();
    use(mock.answer('createComputer', { status: 409, example: 'computer_already_exists' }, { once: true }));
    renderApp(10);
    await create('box-2');
    const error = await screen.findByTestId('error');
    expect(error.dataset).toMatchObject({ status: '409', code: 'already_exists' });
    expect(error.textContent).toMatch(/^Conflict: /);
  });

  it('clicks through create → running → delete on the stateful mock', async () => {
    const mock = freshMock();
    renderApp(10);
    await create('box-3');
    await waitFor(() => expect(screen.getByTestId('created').dataset.state).toBe('running'));
    const row = await waitFor(
      () => screen.getAllByTestId('computer').find((li) => li.dataset.name === 'box-3')!,
    );
    fireEvent.click(within(row).getByRole('button', { name: 'delete box-3' }));
    await waitFor(() => expect(names()).not.toContain('box-3'));
    const deleted = mock
      .state!.items('/workspaces/{workspace}/computers')
      .find((s) => s.value.name === 'box-3');
    expect(deleted?.value.state).toBe('deleted');
  });
});
