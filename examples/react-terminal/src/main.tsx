// A terminal page: xterm.js bound to @svc/react's useTerminal. Without `?api=`, the API is the kit's
// simulated terminals (@svc/react/msw's terminalHandlers, answered in the page by msw's getResponse:
// no server, no service worker); with `?api=<base url>&token=<access token>&workspace=…&computer=…`,
// a real server.
import { createClient } from '@svc/client';
import { useTerminal } from '@svc/react';
import { terminalHandlers } from '@svc/react/msw';
import { Terminal as Xterm } from '@xterm/xterm';
import { getResponse } from 'msw';
import { useEffect, useMemo, useRef } from 'react';
import { createRoot } from 'react-dom/client';

const query = new URLSearchParams(location.search);
const api = query.get('api');
const SIMULATED = 'http://simulated.test/v1';
const handlers = terminalHandlers({ baseUrl: SIMULATED });
const simulated = async (request: Request) =>
  (await getResponse(handlers, request)) ?? new Response(null, { status: 404 });

function TerminalPage() {
  const client = useMemo(
    () =>
      api
        ? createClient({ baseUrl: api, token: query.get('token') ?? '' })
        : createClient({ baseUrl: SIMULATED, token: 'simulated', fetch: simulated }),
    [],
  );
  const element = useRef<HTMLDivElement>(null);
  const session = useTerminal({
    client,
    workspace: query.get('workspace') ?? 'dev',
    computer: query.get('computer') ?? 'box',
    open: { cols: 80, rows: 24 },
  });
  const { onData, write, resize } = session;
  useEffect(() => {
    if (!element.current) return;
    const xterm = new Xterm({ cols: 80, rows: 24, convertEol: false });
    xterm.open(element.current);
    xterm.focus();
    const input = xterm.onData((data) => write(data));
    const resized = xterm.onResize(({ cols, rows }) => resize(cols, rows));
    const stop = onData((bytes) => xterm.write(bytes));
    return () => {
      stop();
      input.dispose();
      resized.dispose();
      xterm.dispose();
    };
  }, [onData, write, resize]);
  return (
    <main>
      <h1>Terminal</h1>
      <p role="status" data-status={session.status} data-exit-code={session.exitCode ?? ''}>
        {session.status}
        {session.status === 'closed' ? `, exit code ${session.exitCode ?? 'unknown'}` : ''}
        {session.terminal ? ` (${session.terminal.id})` : ''}
      </p>
      <div id="terminal" ref={element} />
    </main>
  );
}

createRoot(document.getElementById('root') as HTMLElement).render(<TerminalPage />);
