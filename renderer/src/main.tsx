import './strict-csp.ts';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { connect } from './api.ts';
import { App } from './App.tsx';
import './styles.css';

const bridge = connect();
const queries = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    {bridge ? (
      <QueryClientProvider client={queries}>
        <App bridge={bridge} />
      </QueryClientProvider>
    ) : (
      <main className="screen">
        <h1>flowsync</h1>
        <p role="alert" className="error">
          This address has no token: open the address flowsync printed (it ends with #token=…).
        </p>
      </main>
    )}
  </StrictMode>,
);
