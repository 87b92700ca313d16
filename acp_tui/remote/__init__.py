"""ACP over the network: the remote transport of the RFD "Streamable HTTP & WebSocket
Transport" (one `/acp` endpoint; WebSocket, or POSTs and SSE streams)."""
