@echo off
rem Strata for Windows: runs the built-in model once, then shows how to serve your own GGUF.
rem Double-click it, or run it from a Command Prompt in this folder.
cd /d "%~dp0"
echo Strata: the built-in model (a small MoE trained on the King James Bible) continues a prompt.
echo.
strata.exe run -p "In the beginning" -n 60
if errorlevel 1 (
  echo.
  echo strata.exe could not run: the message above says why.
  pause
  exit /b 1
)
echo.
echo.
echo What next, in a Command Prompt in this folder:
echo   strata.exe chat                                   chat with the built-in model
echo   strata.exe plan -m C:\models\model.gguf           where a model's memory would go on this PC
echo   strata.exe serve -m C:\models\model.gguf --port 8080
echo        an OpenAI- and Anthropic-compatible server: point a chat UI or a coding agent at
echo        http://127.0.0.1:8080/v1 (the chat page is http://127.0.0.1:8080/)
echo   strata.exe devices                                which GPUs Strata sees
echo   strata.exe --help                                 every command
echo.
pause
