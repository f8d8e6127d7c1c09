model = dict(type='DeepSigmoidMLP')
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.5), clip_grad=dict(max_norm=5.0))
param_scheduler = []
train_cfg = dict(by_epoch=True, max_epochs=400, val_interval=40)
default_hooks = dict(logger=dict(type='LoggerHook', interval=10))
log_processor = dict(window_size=10, by_epoch=True)
vis_backends = [dict(type='LocalVisBackend')]
