# A model served locally through the OpenAI-compatible API (vLLM, SGLang,
# llama.cpp server, Ollama, ...). Local servers accept any non-empty key:
# export LOCAL_API_KEY=anything (or point key= at another variable).
models = [
    dict(
        type='OpenAIChatModel',
        abbr='local-model',
        path='{{$SCICODE_MODEL:Qwen/Qwen2.5-Coder-7B-Instruct}}',
        base_url='{{$SCICODE_BASE_URL:http://localhost:8000/v1}}',
        key='LOCAL_API_KEY',
        temperature=0.0,
        max_out_len=4096,
        max_concurrency=32,
        timeout=1200,
    )
]
