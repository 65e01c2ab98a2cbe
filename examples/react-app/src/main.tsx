// The page's settings come from its address: `?api=…&token=…&workspace=…&limit=…&prefer=…`, or
// `?mock` to run on the MSW service worker in stateful mode (no server at all).
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { apiFor } from './api.js';

const settings = new URLSearchParams(location.search);
const mocked = settings.has('mock');
const baseUrl = mocked
  ? new URL('/api/v1', location.origin).href
  : (settings.get('api') ?? 'http://127.0.0.1:4010');

async function start() {
  if (mocked) {
    // Loaded only in this mode: MSW and the spec's document stay out of the app's own bundle.
    const [{ setupWorker }, { createMock }] = await Promise.all([
      import('msw/browser'),
      import('@svc/react/msw'),
    ]);
    const mock = createMock({ baseUrl, stateful: { stepMs: Number(settings.get('step') ?? 300) } });
    await setupWorker(...mock.handlers).start({ onUnhandledRequest: 'bypass', quiet: true });
  }
  const limit = Number(settings.get('limit') ?? 20);
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <QueryClientProvider client={new QueryClient()}>
        <App
          api={apiFor(baseUrl, settings.get('token') ?? 'mock')}
          workspace={settings.get('workspace') ?? undefined}
          limit={limit}
          prefer={settings.get('prefer') ?? undefined}
        />
      </QueryClientProvider>
    </StrictMode>,
  );
}

void start();
