import './strict-csp.ts';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { connect, NoSession, type WindowBridge } from './api.ts';
import { App } from './App.tsx';
import './styles.css';

// The window registers no service worker, and a worker of this origin would see every request of the page
// (its session's included): any found is removed. The address is the agent's run's own (src/window/bridge/bridge.ts),
// so none should ever be there.
void navigator.serviceWorker
  ?.getRegistrations()
  .then((registrations) => Promise.all(registrations.map((registration) => registration.unregister())));

const queries = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } },
});
const root = createRoot(document.getElementById('root')!);

function showApp(bridge: WindowBridge): void {
  root.render(
    <StrictMode>
      <QueryClientProvider client={queries}>
        <App bridge={bridge} />
      </QueryClientProvider>
    </StrictMode>,
  );
}

function showRefusal(message: string): void {
  root.render(
    <StrictMode>
      <main className="screen">
        <h1>flowsync</h1>
        <p role="alert" className="error">
          {message}
        </p>
      </main>
    </StrictMode>,
  );
}

connect().then(showApp, (error: unknown) =>
  showRefusal(
    error instanceof NoSession
      ? error.message
      : 'The agent does not answer: is it still running? `flowsync ui --open` opens a new window.',
  ),
);
